package postgres

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

// Catalog implements store.Store in one round trip: a REPEATABLE READ
// transaction (so that plugins, releases and channels are one consistent
// state) that reads the page's plugins, their releases and their channels,
// sent as one batch.
//
// The page size is written into the SQL, not passed as a parameter: with
// LIMIT $2, the plan PostgreSQL keeps for the prepared statement after a
// few runs assumes a tenth of the catalog, and joins it to every release
// and channel by a full scan (70 ms at 50,000 plugins). A known LIMIT keeps
// the joins on the indexes. Pages have a few sizes, so few statements are
// prepared.
func (db *DB) Catalog(ctx context.Context, q store.CatalogQuery) ([]distribution.CatalogPlugin, error) {
	where, args := `WHERE id > $1 ORDER BY id LIMIT `+strconv.Itoa(max(q.Limit, 1)), []any{q.After}
	if q.PluginID != "" {
		where, args = `WHERE id = $1`, []any{q.PluginID}
	}
	page := `SELECT id FROM plugins ` + where
	var b pgx.Batch
	b.Queue(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`)
	b.Queue(`SELECT id, name, description FROM plugins `+where, args...)
	// Each plugin's releases and channels are looked up by index, per
	// plugin of the page: OFFSET 0 keeps the planner from flattening the
	// lateral subqueries into a join whose method it picks from
	// statistics, and right after a bulk load (before autovacuum has
	// analysed the tables) it picked full scans (50 ms instead of 1 ms at
	// 50,000 plugins).
	b.Queue(`SELECT `+releaseColumns+` FROM (`+page+`) p
		CROSS JOIN LATERAL (SELECT * FROM releases WHERE plugin_id = p.id OFFSET 0) r
		ORDER BY r.plugin_id, r.published_at DESC, r.id`, args...)
	b.Queue(`SELECT c.plugin_id, c.name, c.release_id FROM (`+page+`) p
		CROSS JOIN LATERAL (SELECT plugin_id, name, release_id FROM channels WHERE plugin_id = p.id OFFSET 0) c
		CROSS JOIN LATERAL (SELECT yanked FROM releases WHERE id = c.release_id OFFSET 0) r
		WHERE NOT r.yanked`, args...)
	b.Queue(`COMMIT`)
	// A failure leaves the connection inside the transaction; the pool
	// discards such connections on release.
	br := db.pool.SendBatch(ctx, &b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	var pb store.PageBuilder
	for _, add := range []func(store.Rows) error{pb.AddPlugins, pb.AddReleases, pb.AddChannels} {
		// An error of the query itself is reported by its rows too.
		rows, _ := br.Query()
		err := add(rows)
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
		if err != nil {
			return nil, err
		}
	}
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	return pb.Plugins(), nil
}
