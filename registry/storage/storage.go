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
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

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
}

// Storage is an opened store and blob store.
type Storage struct {
	Store store.Store
	Blobs blobs.Store
	// SpoolDir is where the server should spool uploads ("" for the
	// system default).
	SpoolDir string
}

// Close closes the store, then the blob store if it holds something to
// release (io.Closer: the S3 store's idle connections). A server calls it
// once its requests have drained.
func (s *Storage) Close() error {
	return errors.Join(s.Store.Close(), closeBlobs(s.Blobs))
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

// Open opens (creating what is missing) the storage cfg names.
// Opening PostgreSQL applies its migrations under an advisory lock, so
// that replicas may start together.
func Open(ctx context.Context, cfg Config) (*Storage, error) {
	if cfg.DataDir == "" && (cfg.DatabaseURL == "" || cfg.BlobsURL == "") {
		return nil, errors.New("storage: a data directory is needed unless both the database and the blobs are elsewhere")
	}
	if cfg.DataDir != "" {
		if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
			return nil, fmt.Errorf("storage: data directory: %w", err)
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
		return nil, fmt.Errorf("storage: blobs: %w", err)
	}
	st, err := OpenStore(ctx, cfg)
	if err != nil {
		closeBlobs(b)
		return nil, err
	}
	s := &Storage{Store: st, Blobs: b}
	if cfg.DataDir != "" {
		s.SpoolDir = filepath.Join(cfg.DataDir, "uploads")
	}
	return s, nil
}

// OpenStore opens the metadata store of cfg alone: for tools that need no
// blobs (plugkit serve token).
func OpenStore(ctx context.Context, cfg Config) (store.Store, error) {
	switch {
	case cfg.DatabaseURL == "" && cfg.DataDir == "":
		return nil, errors.New("storage: no database: give a data directory or a database URL")
	case cfg.DatabaseURL == "":
		if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
			return nil, fmt.Errorf("storage: data directory: %w", err)
		}
		return sqlite.Open(filepath.Join(cfg.DataDir, "registry.db"))
	case IsPostgresURL(cfg.DatabaseURL):
		db, err := postgres.Open(ctx, cfg.DatabaseURL, postgres.Options{NoMigrate: cfg.NoMigrate})
		if err != nil {
			return nil, fmt.Errorf("storage: database %s: %w", postgres.Redact(cfg.DatabaseURL), err)
		}
		return db, nil
	}
	return nil, errors.New("storage: the database URL must start with postgres:// or postgresql://")
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
	db, err := sqlite.Open(filepath.Join(dir, "registry.db"))
	if err != nil {
		return nil, nil, err
	}
	return db, b, nil
}
