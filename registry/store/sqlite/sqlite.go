// Package sqlite is the embedded store.Store: one SQLite database file in
// WAL mode, through the pure-Go modernc.org/sqlite driver (no cgo).
//
// Writes go through a pool of one connection, so that SQLite's single
// writer never meets a second one inside this process and transactions
// never fail with SQLITE_BUSY; reads use their own pool, which WAL lets run
// alongside the writer.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/plugkit/plugkit/registry/store"
)

// DB is a store.Store in one SQLite file.
type DB struct {
	w *sql.DB // writer: one connection
	r *sql.DB // readers
}

var _ store.Store = (*DB)(nil)

// schema is applied on every Open; every statement is idempotent.
// Times are Unix nanoseconds. A release's ID is unique, and so is its
// (plugin, version, digest) triple by construction of the ID.
const schema = `
CREATE TABLE IF NOT EXISTS plugins (
	id          TEXT PRIMARY KEY,
	name        TEXT NOT NULL,
	description TEXT NOT NULL,
	updated_at  INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS releases (
	id           TEXT PRIMARY KEY,
	plugin_id    TEXT NOT NULL REFERENCES plugins(id),
	version      TEXT NOT NULL,
	description  TEXT NOT NULL,
	digest       TEXT NOT NULL,
	size         INTEGER NOT NULL,
	yanked       INTEGER NOT NULL DEFAULT 0,
	published_at INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS releases_plugin ON releases(plugin_id, published_at);
CREATE INDEX IF NOT EXISTS releases_digest ON releases(digest);
CREATE TABLE IF NOT EXISTS channels (
	plugin_id  TEXT NOT NULL REFERENCES plugins(id),
	name       TEXT NOT NULL,
	release_id TEXT NOT NULL REFERENCES releases(id),
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (plugin_id, name)
) STRICT;
CREATE TABLE IF NOT EXISTS installations (
	id          TEXT PRIMARY KEY,
	plugin_id   TEXT NOT NULL,
	release_id  TEXT NOT NULL,
	digest      TEXT NOT NULL,
	status      TEXT NOT NULL,
	host        TEXT NOT NULL,
	reported_at INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS installations_plugin ON installations(plugin_id);
`

// Open opens or creates the database at path, switches it to WAL and
// applies the schema.
func Open(path string) (*DB, error) {
	// synchronous=FULL: a publish that returned is on disk even after a
	// power loss, not only after a crash of the process; publishes are rare
	// enough that the extra fsync does not matter.
	common := []string{"busy_timeout(10000)", "foreign_keys(1)", "synchronous(FULL)"}
	w, err := openPool(path, append(common, "journal_mode(WAL)"), "immediate")
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(schema); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: schema: %w", err)
	}
	r, err := openPool(path, append(common, "query_only(1)"), "deferred")
	if err != nil {
		w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(4 * runtime.GOMAXPROCS(0))
	r.SetMaxIdleConns(4 * runtime.GOMAXPROCS(0))
	return &DB{w: w, r: r}, nil
}

func openPool(path string, pragmas []string, txlock string) (*sql.DB, error) {
	// The driver cuts its parameters at the first '?' of the name.
	if strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("sqlite: database path %q holds a '?'", path)
	}
	q := url.Values{"_txlock": {txlock}}
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	db, err := sql.Open("sqlite", path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	return db, nil
}

// Close closes both pools.
func (db *DB) Close() error {
	return errors.Join(db.r.Close(), db.w.Close())
}

// inTx runs f in a write transaction and commits it, or rolls back on error.
func (db *DB) inTx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}
