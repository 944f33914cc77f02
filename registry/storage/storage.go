// Package storage opens a registry's metadata store and blob store from
// where they live: SQLite and a directory under a data directory by
// default, PostgreSQL and S3-compatible object storage when named. It is
// the one package that links the database and object-store drivers;
// package registry serves whatever store.Store and blobs.Store it is
// handed.
package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/plugkit/plugkit/internal/filelock"
	"github.com/plugkit/plugkit/registry/blobs"
	"github.com/plugkit/plugkit/registry/blobs/s3"
	"github.com/plugkit/plugkit/registry/store"
	"github.com/plugkit/plugkit/registry/store/postgres"
	"github.com/plugkit/plugkit/registry/store/sqlite"
)

// Config says where a registry keeps its metadata and artifacts.
// The zero value of each part is the embedded default under DataDir.
type Config struct {
	// DataDir holds whatever is not elsewhere: registry.db without
	// DatabaseURL, blobs/ without BlobsURL, and uploads/ (the publish
	// spool). With both URLs set it may be empty: uploads then spool to
	// the system's temporary directory.
	DataDir string
	// DatabaseURL selects PostgreSQL ("postgres://USER@HOST:PORT/DB?…");
	// empty means SQLite in DataDir. Its password, if it has none, comes
	// from PGPASSWORD or the .pgpass file.
	DatabaseURL string
	// BlobsURL selects object storage ("s3://BUCKET/PREFIX"); empty
	// means the directory DataDir/blobs.
	BlobsURL string
	// S3 configures the S3 client when BlobsURL is set.
	S3 s3.Options
	// NoMigrate opens a database without applying migrations, failing
	// when its schema is not current (PostgreSQL only; SQLite always
	// migrates, in one process).
	NoMigrate bool
	// OpenExisting opens only a registry that is there: DataDir, when it
	// holds the database or the blobs, must exist, and with SQLite hold
	// registry.db. Otherwise Open, OpenStore and Migrate fail with
	// ErrNoRegistry and create nothing, so that a verb that reads or
	// maintains a registry never turns a mistyped directory into an empty
	// one. A PostgreSQL database that no plugkit ever migrated holds no
	// registry either, and Open and OpenStore leave it without a schema;
	// Migrate still creates one there, as that is how a registry on
	// PostgreSQL begins.
	OpenExisting bool
	// Exclusive makes Open lock DataDir, when it holds the SQLite
	// database, until Close, and fail with ErrInUse while another Storage,
	// in any process, holds it: a server caches what it reads, and beside
	// another server writing the same database it would answer stale
	// reads. PostgreSQL replicas share their database by design (they
	// hear of each other's writes) and take no lock.
	Exclusive bool
}

// Errors of Open, OpenStore and Migrate.
var (
	// ErrNoRegistry: Config.OpenExisting, and no registry where the
	// configuration points.
	ErrNoRegistry = errors.New("no registry")
	// ErrInUse: Config.Exclusive, and another process holds the data
	// directory.
	ErrInUse = errors.New("in use by another server")
)

// lockFile is the file of DataDir that Config.Exclusive locks.
const lockFile = "registry.lock"

// Storage is an opened store and blob store.
type Storage struct {
	Store store.Store
	Blobs blobs.Store
	// SpoolDir is where the server should spool uploads ("" for the
	// system default).
	SpoolDir string
	// lock holds the data directory (Config.Exclusive); nil without.
	lock *os.File
}

// Close closes the store, then the blob store if it holds something to
// release (io.Closer: the S3 store's idle connections), then releases the
// data directory. A server calls it once its requests have drained.
func (s *Storage) Close() error {
	return errors.Join(s.Store.Close(), closeBlobs(s.Blobs), unlock(s.lock))
}

// closeBlobs closes b if it is an io.Closer; blobs.Store asks for no
// Close, as the directory store has nothing to close.
func closeBlobs(b blobs.Store) error {
	if c, ok := b.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// IsPostgresURL reports whether a database URL names PostgreSQL.
func IsPostgresURL(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}

// ErrPasswordInURL: a database URL given where it could be seen (a
// command line) holds a password.
var ErrPasswordInURL = errors.New("the database URL holds a password: give it in PLUGKIT_DATABASE_URL, PGPASSWORD or a .pgpass file instead")

// CheckURLHasNoPassword refuses a database URL with a password in it.
func CheckURLHasNoPassword(dbURL string) error {
	u, err := url.Parse(dbURL)
	if err != nil {
		return errors.New("invalid database URL")
	}
	if _, has := u.User.Password(); has || u.Query().Has("password") {
		return ErrPasswordInURL
	}
	return nil
}

// Open opens (creating what is missing, unless cfg.OpenExisting) the
// storage cfg names. Opening PostgreSQL applies its migrations under an
// advisory lock, so that replicas may start together.
func Open(ctx context.Context, cfg Config) (*Storage, error) {
	if cfg.DataDir == "" && (cfg.DatabaseURL == "" || cfg.BlobsURL == "") {
		return nil, errors.New("storage: a data directory is needed unless both the database and the blobs are elsewhere")
	}
	if err := prepareDataDir(cfg); err != nil {
		return nil, err
	}
	var lock *os.File
	if cfg.Exclusive && cfg.DatabaseURL == "" {
		var err error
		if lock, err = lockDataDir(cfg.DataDir); err != nil {
			return nil, err
		}
	}
	var b blobs.Store
	var err error
	if cfg.BlobsURL != "" {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		b, err = s3.Open(ctx, cfg.BlobsURL, cfg.S3)
		cancel()
	} else {
		b, err = blobs.OpenDir(filepath.Join(cfg.DataDir, "blobs"))
	}
	if err != nil {
		unlock(lock)
		return nil, fmt.Errorf("storage: blobs: %w", err)
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		closeBlobs(b)
		unlock(lock)
		return nil, err
	}
	s := &Storage{Store: st, Blobs: b, lock: lock}
	if cfg.DataDir != "" {
		s.SpoolDir = filepath.Join(cfg.DataDir, "uploads")
	}
	return s, nil
}

// OpenStore opens the metadata store of cfg alone: for tools that need no
// blobs (plugkit serve token).
func OpenStore(ctx context.Context, cfg Config) (store.Store, error) {
	if cfg.DatabaseURL == "" && cfg.DataDir == "" {
		return nil, errors.New("storage: no database: give a data directory or a database URL")
	}
	if cfg.DatabaseURL == "" {
		if err := prepareDataDir(cfg); err != nil {
			return nil, err
		}
	}
	return openStore(ctx, cfg)
}

// openStore is OpenStore once the data directory is prepared: Open has
// prepared it already.
func openStore(ctx context.Context, cfg Config) (store.Store, error) {
	switch {
	case cfg.DatabaseURL == "":
		return sqlite.Open(filepath.Join(cfg.DataDir, sqliteFile))
	case IsPostgresURL(cfg.DatabaseURL):
		db, err := postgres.Open(ctx, cfg.DatabaseURL, postgres.Options{NoMigrate: cfg.NoMigrate, Existing: cfg.OpenExisting})
		if errors.Is(err, postgres.ErrNoSchema) {
			return nil, fmt.Errorf("storage: %w in database %s (never migrated)", ErrNoRegistry, postgres.Redact(cfg.DatabaseURL))
		}
		if err != nil {
			return nil, fmt.Errorf("storage: database %s: %w", postgres.Redact(cfg.DatabaseURL), err)
		}
		return db, nil
	}
	return nil, errors.New("storage: the database URL must start with postgres:// or postgresql://")
}

// sqliteFile is the SQLite database in DataDir.
const sqliteFile = "registry.db"

// prepareDataDir creates cfg.DataDir when it is needed; with
// cfg.OpenExisting it checks instead that the registry is there.
func prepareDataDir(cfg Config) error {
	if cfg.DataDir == "" {
		return nil
	}
	if !cfg.OpenExisting {
		if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
			return fmt.Errorf("storage: data directory: %w", err)
		}
		return nil
	}
	if cfg.DatabaseURL != "" && cfg.BlobsURL != "" {
		return nil // the directory only spools uploads
	}
	want := cfg.DataDir
	if cfg.DatabaseURL == "" {
		want = filepath.Join(cfg.DataDir, sqliteFile)
	}
	if _, err := os.Stat(want); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("storage: %w in %s (%s does not exist)", ErrNoRegistry, cfg.DataDir, want)
	} else if err != nil {
		return fmt.Errorf("storage: data directory: %w", err)
	}
	return nil
}

// lockDataDir takes the lock of Config.Exclusive on dir.
func lockDataDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("storage: data directory: %w", err)
	}
	if err := filelock.TryLock(f); err != nil {
		holder := filelock.Holder(f)
		f.Close()
		if errors.Is(err, filelock.ErrLocked) {
			if holder != "" {
				holder = " (" + holder + ")"
			}
			return nil, fmt.Errorf("storage: data directory %s: %w%s", dir, ErrInUse, holder)
		}
		return nil, fmt.Errorf("storage: locking %s: %w", path, err)
	}
	// Who holds it, for the message of the next one; the lock works
	// without.
	filelock.Stamp(f)
	return f, nil
}

// unlock releases and closes the lock of lockDataDir, if any.
func unlock(f *os.File) error {
	if f == nil {
		return nil
	}
	return errors.Join(filelock.Unlock(f), f.Close())
}

// Migration is one schema migration and whether this run applied it.
type Migration = postgres.Migration

// Migrate brings the database of cfg up to date and reports the
// migrations: for PostgreSQL each version and whether it was applied now;
// SQLite migrates whenever it is opened, and reports nothing.
func Migrate(ctx context.Context, cfg Config) ([]Migration, error) {
	if !IsPostgresURL(cfg.DatabaseURL) {
		st, err := OpenStore(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return []Migration{}, st.Close()
	}
	db, err := postgres.Connect(ctx, cfg.DatabaseURL, postgres.Options{})
	if err != nil {
		return nil, fmt.Errorf("storage: database %s: %w", postgres.Redact(cfg.DatabaseURL), err)
	}
	defer db.Close()
	return db.Migrate(ctx)
}

// OpenDir opens (creating it if needed) the embedded storage under one
// data directory: the SQLite database dir/registry.db and the blob
// directory dir/blobs. Closing the returned store closes the database.
func OpenDir(dir string) (*sqlite.DB, *blobs.Dir, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, nil, fmt.Errorf("storage: data directory: %w", err)
	}
	b, err := blobs.OpenDir(filepath.Join(dir, "blobs"))
	if err != nil {
		return nil, nil, fmt.Errorf("storage: blobs: %w", err)
	}
	db, err := sqlite.Open(filepath.Join(dir, sqliteFile))
	if err != nil {
		return nil, nil, err
	}
	return db, b, nil
}
