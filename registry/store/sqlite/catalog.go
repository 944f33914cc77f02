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
	if err := readAll(rows, page.AddPlugins); err != nil {
		return nil, err
	}
	first, last, ok := page.Span()
	if !ok {
		return page.Plugins(), nil
	}
	for _, part := range []struct {
		stmt *sql.Stmt
		add  func(store.Rows) error
	}{{db.q.catalogReleases, page.AddReleases}, {db.q.catalogChannels, page.AddChannels}} {
		rows, err := tx.StmtContext(ctx, part.stmt).QueryContext(ctx, first, last)
		if err != nil {
			return nil, err
		}
		if err := readAll(rows, part.add); err != nil {
			return nil, err
		}
	}
	return page.Plugins(), nil
}

// readAll hands rows to read and closes them.
func readAll(rows *sql.Rows, read func(store.Rows) error) error {
	err := read(rows)
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}
