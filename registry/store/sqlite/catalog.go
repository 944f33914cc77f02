package sqlite

import (
	"context"

	"github.com/plugkit/plugkit/distribution"
)

// Catalog implements store.Store. It reads in one transaction, so that the
// plugins, releases and channels it returns are one consistent state.
func (db *DB) Catalog(ctx context.Context) ([]distribution.CatalogPlugin, error) {
	tx, err := db.r.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()

	var plugins []distribution.CatalogPlugin
	index := map[string]int{}
	rows, err := tx.QueryContext(ctx, `SELECT id, name, description FROM plugins ORDER BY id`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		p := distribution.CatalogPlugin{Channels: map[string]string{}, Releases: []distribution.Release{}}
		if err := rows.Scan(&p.ID, &p.Name, &p.Description); err != nil {
			rows.Close()
			return nil, err
		}
		index[p.ID] = len(plugins)
		plugins = append(plugins, p)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}

	rows, err = tx.QueryContext(ctx, `SELECT `+releaseColumns+` FROM releases r
		ORDER BY r.plugin_id, r.published_at DESC, r.id`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		rel, err := scanRelease(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		p := &plugins[index[rel.PluginID]]
		p.Releases = append(p.Releases, rel)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}

	rows, err = tx.QueryContext(ctx, `SELECT c.plugin_id, c.name, c.release_id
		FROM channels c JOIN releases r ON r.id = c.release_id WHERE r.yanked = 0`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var plugin, channel, release string
		if err := rows.Scan(&plugin, &channel, &release); err != nil {
			rows.Close()
			return nil, err
		}
		plugins[index[plugin]].Channels[channel] = release
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if plugins == nil {
		plugins = []distribution.CatalogPlugin{}
	}
	return plugins, nil
}
