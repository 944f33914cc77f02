package sqlite

import (
	"context"
	"database/sql"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

// Catalog implements store.Store. It reads in one transaction, so that the
// plugins, releases and channels it returns are one consistent state, and
// reads a page's releases and channels with one range scan each.
func (db *DB) Catalog(ctx context.Context, q store.CatalogQuery) ([]distribution.CatalogPlugin, error) {
	var plugins []distribution.CatalogPlugin
	err := db.read(ctx, func(tx *sql.Tx) error {
		var err error
		plugins, err = db.catalog(ctx, tx, q)
		return err
	})
	return plugins, err
}

func (db *DB) catalog(ctx context.Context, tx *sql.Tx, q store.CatalogQuery) ([]distribution.CatalogPlugin, error) {
	var rows *sql.Rows
	var err error
	if q.PluginID != "" {
		rows, err = tx.StmtContext(ctx, db.q.catalogPlugin).QueryContext(ctx, q.PluginID)
	} else {
		rows, err = tx.StmtContext(ctx, db.q.catalogPlugins).QueryContext(ctx, q.After, q.Limit)
	}
	if err != nil {
		return nil, err
	}
	var page store.PageBuilder
	for rows.Next() {
		var id, name, description string
		if err := rows.Scan(&id, &name, &description); err != nil {
			rows.Close()
			return nil, err
		}
		page.AddPlugin(id, name, description)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	first, last, ok := page.Span()
	if !ok {
		return page.Plugins(), nil
	}

	rows, err = tx.StmtContext(ctx, db.q.catalogReleases).QueryContext(ctx, first, last)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		rel, err := scanRelease(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		page.AddRelease(rel)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}

	rows, err = tx.StmtContext(ctx, db.q.catalogChannels).QueryContext(ctx, first, last)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var plugin, channel, release string
		if err := rows.Scan(&plugin, &channel, &release); err != nil {
			return nil, err
		}
		page.AddChannel(plugin, channel, release)
	}
	return page.Plugins(), rows.Err()
}
