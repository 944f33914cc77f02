package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// migrations bring the schema from version i to i+1; schema_migrations
// records each one applied. Times are Unix nanoseconds, as in SQLite. IDs
// and the columns that pages are sorted and cut by are COLLATE "C" (byte
// order).
var migrations = []string{
	// 1: the schema of the SQLite store's version 2, plus tokens.
	`CREATE TABLE plugins (
		id          text COLLATE "C" PRIMARY KEY,
		name        text NOT NULL,
		description text NOT NULL,
		updated_at  bigint NOT NULL
	);
	CREATE TABLE releases (
		id           text COLLATE "C" PRIMARY KEY,
		plugin_id    text COLLATE "C" NOT NULL REFERENCES plugins(id),
		version      text NOT NULL,
		description  text NOT NULL,
		digest       text COLLATE "C" NOT NULL,
		size         bigint NOT NULL,
		yanked       boolean NOT NULL DEFAULT false,
		published_at bigint NOT NULL
	);
	CREATE INDEX releases_plugin ON releases(plugin_id, published_at);
	CREATE INDEX releases_digest ON releases(digest);
	CREATE TABLE channels (
		plugin_id  text COLLATE "C" NOT NULL REFERENCES plugins(id),
		name       text COLLATE "C" NOT NULL,
		release_id text COLLATE "C" NOT NULL REFERENCES releases(id),
		updated_at bigint NOT NULL,
		PRIMARY KEY (plugin_id, name)
	);
	CREATE TABLE owners (
		plugin_id text COLLATE "C" NOT NULL REFERENCES plugins(id),
		identity  text COLLATE "C" NOT NULL,
		PRIMARY KEY (plugin_id, identity)
	);
	CREATE TABLE installations (
		reporter    text COLLATE "C" NOT NULL,
		id          text COLLATE "C" NOT NULL,
		plugin_id   text COLLATE "C" NOT NULL,
		release_id  text NOT NULL,
		digest      text NOT NULL,
		status      text NOT NULL,
		host        text NOT NULL,
		reported_at bigint NOT NULL,
		PRIMARY KEY (reporter, id)
	);
	CREATE INDEX installations_list ON installations(plugin_id, reporter, id);
	CREATE TABLE tokens (
		id         text COLLATE "C" PRIMARY KEY,
		name       text NOT NULL,
		role       text NOT NULL CHECK (role IN ('reader', 'publisher', 'admin')),
		sum        bytea NOT NULL UNIQUE,
		created_at bigint NOT NULL,
		revoked_at bigint
	);`,
}

// migrationLock is the session advisory lock that replicas starting at
// once take in turn: the first applies the migrations, the others find
// nothing left to do.
var migrationLock = lockKey("migrations", "schema")

// Migration is one migration's outcome.
type Migration struct {
	Version int  `json:"version"`
	Applied bool `json:"applied"` // false: it was already there
}

// Migrate applies the migrations the database has not seen, each in its
// own transaction, under an advisory lock held on one connection. It
// returns every known version and whether this call applied it. A database
// of a newer schema than this plugkit knows is refused untouched.
func (db *DB) Migrate(ctx context.Context) ([]Migration, error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return nil, fmt.Errorf("postgres: migration lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLock)

	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	version, err := schemaVersion(ctx, conn)
	if err != nil {
		return nil, err
	}
	var out []Migration
	for i := range migrations {
		if i < version {
			out = append(out, Migration{Version: i + 1})
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, migrations[i]); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version) VALUES ($1)`, i+1)
			return err
		})
		if err != nil {
			return out, fmt.Errorf("postgres: migration %d: %w", i+1, err)
		}
		out = append(out, Migration{Version: i + 1, Applied: true})
	}
	return out, nil
}

// schemaVersion reads the highest applied migration, refusing one newer
// than this plugkit knows.
func schemaVersion(ctx context.Context, q querier) (int, error) {
	var version int
	err := q.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&version)
	if err != nil {
		return 0, fmt.Errorf("postgres: schema version: %w", err)
	}
	if version > len(migrations) {
		return 0, fmt.Errorf("postgres: schema version %d is newer than this plugkit knows (%d)", version, len(migrations))
	}
	return version, nil
}

// ErrSchema: the database's schema is not the one this plugkit knows.
var ErrSchema = errors.New("postgres: the database schema is not up to date; run plugkit serve migrate")

// ErrNoSchema: no plugkit ever migrated the database, so it holds no
// registry (Options.Existing).
var ErrNoSchema = errors.New("postgres: the database holds no registry")

// migratedVersion is schemaVersion, with ErrNoSchema for a database no
// plugkit ever migrated.
func (db *DB) migratedVersion(ctx context.Context) (int, error) {
	version, err := schemaVersion(ctx, db.pool)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table
		return 0, ErrNoSchema
	}
	return version, err
}

// checkMigrated checks, without changing anything, that some plugkit
// migrated the database.
func (db *DB) checkMigrated(ctx context.Context) error {
	_, err := db.migratedVersion(ctx)
	return err
}

// checkSchema checks, without changing anything, that every migration was
// applied.
func (db *DB) checkSchema(ctx context.Context) error {
	version, err := db.migratedVersion(ctx)
	if errors.Is(err, ErrNoSchema) {
		return ErrSchema
	}
	if err != nil {
		return err
	}
	if version != len(migrations) {
		return ErrSchema
	}
	return nil
}
