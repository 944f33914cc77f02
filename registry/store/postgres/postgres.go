// Package postgres is the store.Store of a registry that outgrows one
// machine: metadata in PostgreSQL (through github.com/jackc/pgx/v5), shared
// by any number of `plugkit serve` replicas.
//
// SQLite serialises every write; PostgreSQL runs them side by side, so each
// write transaction here first takes a transaction-scoped advisory lock on
// its plugin (pluginLock). Writes to one plugin are then serialised across
// every replica, which gives them the same read-check-write semantics as
// the embedded store (one owner for a new plugin, exact quotas, one winner
// among conflicting publishes), while writes to different plugins proceed
// in parallel.
//
// Every write transaction also sends a notification on the channel
// "plugkit_changes" (delivered at commit); Watch listens to it so that each
// replica drops its caches as soon as another one writes. Text columns
// compared or sorted are COLLATE "C", so that pages and cursors follow byte
// order whatever the database's locale, exactly as in SQLite.
package postgres

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/plugkit/plugkit/registry/store"
)

// DB is a store.Store in a PostgreSQL database.
type DB struct {
	pool      *pgxpool.Pool
	cfg       *pgx.ConnConfig // for the LISTEN connection of Watch
	publishes publishQueue
	// watchPing, watchPingTimeout and watchPingGiveUp, when set,
	// replace the constants of the same names, so that a test sees a
	// ping time out at once.
	watchPing, watchPingTimeout, watchPingGiveUp time.Duration
}

var (
	_ store.Store   = (*DB)(nil)
	_ store.Tokens  = (*DB)(nil)
	_ store.Watcher = (*DB)(nil)
)

// Options configure Open. The zero value works.
type Options struct {
	// MaxConns bounds the connection pool (default: pgxpool's, the larger
	// of 4 and the number of CPUs). Each replica holds up to this many
	// connections and one more for Watch.
	MaxConns int32
	// NoMigrate opens a database without bringing its schema up to date;
	// Open then fails if the schema is not the one this plugkit knows.
	NoMigrate bool
	// Existing opens only a database that already holds a registry: one
	// no plugkit ever migrated fails with ErrNoSchema and is left as it
	// was, so that a verb that only reads a registry never creates one.
	Existing bool
}

// Open connects to the database at connURL ("postgres://USER@HOST/DB?…"),
// applies the migrations it has not seen (under an advisory lock, so that
// replicas starting together apply each once) and returns the store. The
// password, when the URL has none, comes from PGPASSWORD or the .pgpass
// file, as for psql.
func Open(ctx context.Context, connURL string, opts Options) (*DB, error) {
	db, err := Connect(ctx, connURL, opts)
	if err != nil {
		return nil, err
	}
	if err := db.prepare(ctx, opts); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// prepare checks or migrates the schema as opts say.
func (db *DB) prepare(ctx context.Context, opts Options) error {
	if opts.Existing {
		if err := db.checkMigrated(ctx); err != nil {
			return err
		}
	}
	if opts.NoMigrate {
		return db.checkSchema(ctx)
	}
	_, err := db.Migrate(ctx)
	return err
}

// Connect connects to the database without looking at its schema: for
// Migrate, and for tools that report on it.
func Connect(ctx context.Context, connURL string, opts Options) (*DB, error) {
	pcfg, err := pgxpool.ParseConfig(connURL)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s", redactParseError(err))
	}
	if opts.MaxConns > 0 {
		pcfg.MaxConns = opts.MaxConns
	}
	// A dead server must not hang a request: connecting is bounded, and
	// idle connections are checked before use after a restart.
	if pcfg.ConnConfig.ConnectTimeout == 0 {
		pcfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	pcfg.HealthCheckPeriod = 5 * time.Second
	// A publish that returned must survive a crash of the server, as
	// with SQLite's synchronous=FULL, whatever the cluster's default; a
	// URL may still say otherwise (options=-csynchronous_commit=off).
	if _, set := pcfg.ConnConfig.RuntimeParams["synchronous_commit"]; !set {
		pcfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	// Fail here, with the connection's error, rather than at the first
	// request.
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return &DB{pool: pool, cfg: pcfg.ConnConfig}, nil
}

// redactParseError stands for pgconn's parse errors, which may quote the
// URL, and with it a password: url.Parse's errors quote it whole.
func redactParseError(error) string {
	return "invalid database URL (want postgres://USER@HOST:PORT/DATABASE?OPTIONS)"
}

// Redact returns connURL without its password, for logs and messages.
func Redact(connURL string) string {
	u, err := url.Parse(connURL)
	if err != nil {
		return "(unparsable database URL)"
	}
	return u.Redacted()
}

// Close closes the pool.
func (db *DB) Close() error {
	db.pool.Close()
	return nil
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error { return db.pool.Ping(ctx) }

// changesChannel is the NOTIFY channel of every write.
const changesChannel = "plugkit_changes"

// lockKey is the advisory lock key of a name: 64 bits of FNV-1a, so that
// the key does not depend on PostgreSQL's own (undocumented) hashing. A
// collision only serialises two plugins' writes.
func lockKey(kind, name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("plugkit/" + kind + "/" + name))
	return int64(h.Sum64())
}

// writeTx is one write transaction.
type writeTx struct {
	ctx context.Context
	tx  pgx.Tx
}

// writeTx serves the write logic the stores share.
var (
	_ store.ReleaseTx      = writeTx{}
	_ store.InstallationTx = writeTx{}
	_ store.OwnerTx        = writeTx{}
)

// write runs f in a transaction that holds the advisory lock of plugin,
// notifies kind on commit, and commits; any error rolls it back.
func (db *DB) write(ctx context.Context, plugin string, kind store.ChangeKind, f func(writeTx) error) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		// One round trip for the lock and the notification, which is only
		// delivered if the transaction commits.
		var b pgx.Batch
		b.Queue(`SELECT pg_advisory_xact_lock($1)`, lockKey("plugin", plugin))
		b.Queue(`SELECT pg_notify($1, $2)`, changesChannel, string(kind))
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			return err
		}
		return f(writeTx{ctx, tx})
	})
}

func (t writeTx) exists(sql string, args ...any) (bool, error) {
	return exists(t.ctx, t.tx, sql, args...)
}

// querier is what pgxpool.Pool and pgx.Tx share.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// exists runs a SELECT 1 query.
func exists(ctx context.Context, q querier, sql string, args ...any) (bool, error) {
	return store.Exists(q.QueryRow(ctx, sql, args...))
}
