package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

// Catalog implements store.Store in one round trip: a REPEATABLE READ
// transaction (so that plugins, releases and channels are one consistent
// state) that reads the page's plugins, their releases and their channels,
// sent as one batch.
func (db *DB) Catalog(ctx context.Context, q store.CatalogQuery) ([]distribution.CatalogPlugin, error) {
	page := `SELECT id FROM plugins WHERE id > $1 ORDER BY id LIMIT $2`
	args := []any{q.After, q.Limit}
	if q.PluginID != "" {
		page, args = `SELECT id FROM plugins WHERE id = $1`, []any{q.PluginID}
	}
	var b pgx.Batch
	b.Queue(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`)
	b.Queue(`SELECT id, name, description FROM plugins WHERE id IN (`+page+`) ORDER BY id`, args...)
	b.Queue(`SELECT `+releaseColumns+` FROM releases r WHERE r.plugin_id IN (`+page+`)
		ORDER BY r.plugin_id, r.published_at DESC, r.id`, args...)
	b.Queue(`SELECT c.plugin_id, c.name, c.release_id
		FROM channels c JOIN releases r ON r.id = c.release_id
		WHERE c.plugin_id IN (`+page+`) AND NOT r.yanked`, args...)
	b.Queue(`COMMIT`)
	// A failure leaves the connection inside the transaction; the pool
	// discards such connections on release.
	br := db.pool.SendBatch(ctx, &b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	var pb store.PageBuilder
	var id, name, description string
	if _, err := pgx.ForEachRow(rowsOf(br.Query()), []any{&id, &name, &description}, func() error {
		pb.AddPlugin(id, name, description)
		return nil
	}); err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		rel, err := scanRelease(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		pb.AddRelease(rel)
	}
	if rows.Close(); rows.Err() != nil {
		return nil, rows.Err()
	}
	var plugin, channel, release string
	if _, err := pgx.ForEachRow(rowsOf(br.Query()), []any{&plugin, &channel, &release}, func() error {
		pb.AddChannel(plugin, channel, release)
		return nil
	}); err != nil {
		return nil, err
	}
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	return pb.Plugins(), nil
}

// rowsOf hands pgx.ForEachRow a query's rows; an error of the query
// itself is reported by the rows too.
func rowsOf(rows pgx.Rows, _ error) pgx.Rows { return rows }
