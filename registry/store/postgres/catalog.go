package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

// Catalog implements store.Store. It reads in one REPEATABLE READ
// transaction, so that plugins, releases and channels are one consistent
// state, and reads a page's releases and channels with one range scan each.
func (db *DB) Catalog(ctx context.Context, q store.CatalogQuery) ([]distribution.CatalogPlugin, error) {
	var plugins []distribution.CatalogPlugin
	err := pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) error {
			var err error
			plugins, err = catalog(ctx, tx, q)
			return err
		})
	return plugins, err
}

func catalog(ctx context.Context, tx pgx.Tx, q store.CatalogQuery) ([]distribution.CatalogPlugin, error) {
	var rows pgx.Rows
	var err error
	if q.PluginID != "" {
		rows, err = tx.Query(ctx, `SELECT id, name, description FROM plugins WHERE id = $1`, q.PluginID)
	} else {
		rows, err = tx.Query(ctx, `SELECT id, name, description FROM plugins WHERE id > $1 ORDER BY id LIMIT $2`, q.After, q.Limit)
	}
	if err != nil {
		return nil, err
	}
	var page store.PageBuilder
	var id, name, description string
	_, err = pgx.ForEachRow(rows, []any{&id, &name, &description}, func() error {
		page.AddPlugin(id, name, description)
		return nil
	})
	first, last, ok := page.Span()
	if err != nil || !ok {
		return page.Plugins(), err
	}

	rows, err = tx.Query(ctx, `SELECT `+releaseColumns+` FROM releases r
		WHERE r.plugin_id >= $1 AND r.plugin_id <= $2
		ORDER BY r.plugin_id, r.published_at DESC, r.id`, first, last)
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
	if rows.Close(); rows.Err() != nil {
		return nil, rows.Err()
	}

	rows, err = tx.Query(ctx, `SELECT c.plugin_id, c.name, c.release_id
		FROM channels c JOIN releases r ON r.id = c.release_id
		WHERE c.plugin_id >= $1 AND c.plugin_id <= $2 AND NOT r.yanked`, first, last)
	if err != nil {
		return nil, err
	}
	var plugin, channel, release string
	_, err = pgx.ForEachRow(rows, []any{&plugin, &channel, &release}, func() error {
		page.AddChannel(plugin, channel, release)
		return nil
	})
	return page.Plugins(), err
}
