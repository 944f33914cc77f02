// Package sqlite is the embedded store.Store: one SQLite database file in
// WAL mode, through the pure-Go modernc.org/sqlite driver (no cgo).
//
// Writes go through a pool of one connection, so that SQLite's single
// writer never meets a second one inside this process and transactions
// never fail with SQLITE_BUSY; reads use their own pool, which WAL lets run
// alongside the writer. The lookups by key of every resolve and artifact
// download bypass database/sql on connections of their own (point.go).
//
// Every statement is prepared once, at Open: parsing the same SQL on every
// request was half of the cost of a resolve. The SQL itself sticks to what
// PostgreSQL also speaks (ON CONFLICT, row values, LIMIT), so that a second
// backend can reuse it with its own placeholders.
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
	p *pointPool
	q queries
}

var (
	_ store.Store  = (*DB)(nil)
	_ store.Tokens = (*DB)(nil)
)

// migrations bring a database from user_version i to i+1. Times are Unix
// nanoseconds. A release's ID is unique, and so is its (plugin, version,
// digest) triple by construction of the ID. Version 1 is the schema of the
// first release, created with IF NOT EXISTS so that databases made before
// user_version was kept pass through it unchanged.
var migrations = []string{
	`CREATE TABLE IF NOT EXISTS plugins (
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
	CREATE INDEX IF NOT EXISTS installations_plugin ON installations(plugin_id);`,

	// Version 2: plugin owners, and installation reports keyed by their
	// reporter. Plugins published before have no owner: they stay
	// admin-only until an admin assigns one. Earlier reports keep an empty
	// reporter.
	`CREATE TABLE owners (
		plugin_id TEXT NOT NULL REFERENCES plugins(id),
		identity  TEXT NOT NULL,
		PRIMARY KEY (plugin_id, identity)
	) STRICT;
	CREATE TABLE installations_v2 (
		reporter    TEXT NOT NULL,
		id          TEXT NOT NULL,
		plugin_id   TEXT NOT NULL,
		release_id  TEXT NOT NULL,
		digest      TEXT NOT NULL,
		status      TEXT NOT NULL,
		host        TEXT NOT NULL,
		reported_at INTEGER NOT NULL,
		PRIMARY KEY (reporter, id)
	) STRICT;
	INSERT INTO installations_v2 (reporter, id, plugin_id, release_id, digest, status, host, reported_at)
		SELECT '', id, plugin_id, release_id, digest, status, host, reported_at FROM installations;
	DROP TABLE installations;
	ALTER TABLE installations_v2 RENAME TO installations;
	CREATE INDEX installations_list ON installations(plugin_id, reporter, id);`,

	// Version 3: tokens kept in the database (only their SHA-256), added
	// and revoked by plugkit serve token while the server runs.
	`CREATE TABLE tokens (
		id         TEXT PRIMARY KEY,
		name       TEXT NOT NULL,
		role       TEXT NOT NULL CHECK (role IN ('reader', 'publisher', 'admin')),
		sum        BLOB NOT NULL UNIQUE,
		created_at INTEGER NOT NULL,
		revoked_at INTEGER
	) STRICT;`,
}

// Open opens or creates the database at path, switches it to WAL, brings
// its schema up to date and prepares every statement.
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
	if err := migrate(w); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	settle(path)
	r, err := openPool(path, append(common, "query_only(1)"), "deferred")
	if err != nil {
		w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(4 * runtime.GOMAXPROCS(0))
	r.SetMaxIdleConns(4 * runtime.GOMAXPROCS(0))
	p, err := openPoints(path, pointConns())
	if err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	db := &DB{w: w, r: r, p: p}
	if err := db.q.prepare(r, w); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: prepare: %w", err)
	}
	return db, nil
}

// migrate applies the migrations the database has not seen, each in its
// own transaction together with the new user_version.
func migrate(w *sql.DB) error {
	var version int
	if err := w.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil {
		return err
	}
	if version > len(migrations) {
		return fmt.Errorf("schema version %d is newer than this plugkit knows (%d)", version, len(migrations))
	}
	for i := version; i < len(migrations); i++ {
		tx, err := w.Begin()
		if err != nil {
			return err
		}
		if _, err := tx.Exec(migrations[i]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		// PRAGMA takes no parameters; i+1 is an int.
		if _, err := tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, i+1)); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// settle commits one transaction that changes nothing (it writes
// user_version back as it is), so that the WAL index holds the database's
// size in pages. SQLite rebuilds that index whenever a process opens the
// database while no other has it open (after every restart), and until
// the first commit it does not know the size: every read transaction then
// asks the file system for it, one fstat per point lookup of a server that
// only reads.
//
// It is for speed only, so it waits for no lock (busy_timeout 0) and its
// errors are dropped: if it cannot commit (another process is writing,
// which will record the size itself, or the file cannot be written),
// lookups stat the file as before. The version is read after the write
// lock is taken, so a concurrent migration is never undone. Open calls it
// while the writer pool is open: closing its own pool then is not the last
// close, which would remove the WAL and the index again.
func settle(path string) {
	db, err := openPool(path, []string{"busy_timeout(0)", "synchronous(FULL)"}, "immediate")
	if err != nil {
		return
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return
	}
	defer tx.Rollback()
	var version int
	if err := tx.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil {
		return
	}
	// PRAGMA takes no parameters; version is an int.
	if _, err := tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, version)); err != nil {
		return
	}
	tx.Commit()
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

// Close closes the statements and both pools.
func (db *DB) Close() error {
	return errors.Join(db.q.close(), db.p.close(), db.r.Close(), db.w.Close())
}

// read runs f in one read-only transaction, a consistent snapshot.
func (db *DB) read(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return f(tx)
}

// inTx runs f in a write transaction and commits it, or rolls back on
// error. Every write of the store goes through it, so that no point
// lookup's transaction is held across a commit (pointPool.beginWrite).
func (db *DB) inTx(ctx context.Context, f func(*sql.Tx) error) error {
	db.p.beginWrite()
	defer db.p.endWrite()
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
