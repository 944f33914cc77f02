package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/internal/testservice"
	"github.com/plugkit/plugkit/registry/blobs"
)

// closingBlobs is a blob directory that holds something to release, as
// the S3 store's idle connections are: it records its Close.
type closingBlobs struct {
	blobs.Store
	closed int
}

var errBlobsClose = errors.New("blobs close failed")

func (c *closingBlobs) Close() error {
	c.closed++
	return errBlobsClose
}

// TestStorageCloseClosesBlobs: closing the storage closes the store and
// then the blob store when it is an io.Closer, and reports its error; a
// blob store with nothing to close (the directory) closes cleanly.
func TestStorageCloseClosesBlobs(t *testing.T) {
	open := func(b blobs.Store) *Storage {
		st, err := OpenStore(context.Background(), Config{DataDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return &Storage{Store: st, Blobs: b}
	}
	dir, err := blobs.OpenDir(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := open(dir).Close(); err != nil {
		t.Errorf("storage on a blob directory: Close: %v", err)
	}
	cb := &closingBlobs{Store: dir}
	if err := open(cb).Close(); !errors.Is(err, errBlobsClose) || cb.closed != 1 {
		t.Errorf("Close: %v, blob store closed %d times; want its error and once", err, cb.closed)
	}
}

// TestOpenExisting: with OpenExisting, a data directory that is missing
// or holds no database fails every way of opening it with ErrNoRegistry
// and creates nothing; one that holds a registry opens.
func TestOpenExisting(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	missing := filepath.Join(parent, "typo")
	empty := filepath.Join(parent, "empty")
	if err := os.Mkdir(empty, 0o750); err != nil {
		t.Fatal(err)
	}
	// Blobs elsewhere would need S3; a database elsewhere, with the blobs
	// in the directory, needs the directory too.
	for _, cfg := range []Config{
		{DataDir: missing, OpenExisting: true},
		{DataDir: empty, OpenExisting: true},
		{DataDir: missing, DatabaseURL: "postgres://u@127.0.0.1:1/db", OpenExisting: true},
	} {
		if st, err := Open(ctx, cfg); !errors.Is(err, ErrNoRegistry) || !strings.Contains(err.Error(), cfg.DataDir) {
			t.Errorf("Open %+v: %v, want ErrNoRegistry naming the directory", cfg, err)
			if err == nil {
				st.Close()
			}
		}
		if cfg.DatabaseURL != "" {
			continue
		}
		if st, err := OpenStore(ctx, cfg); !errors.Is(err, ErrNoRegistry) {
			t.Errorf("OpenStore %+v: %v, want ErrNoRegistry", cfg, err)
			if err == nil {
				st.Close()
			}
		}
		if _, err := Migrate(ctx, cfg); !errors.Is(err, ErrNoRegistry) {
			t.Errorf("Migrate %+v: %v, want ErrNoRegistry", cfg, err)
		}
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s was created: %v", missing, err)
	}
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Errorf("%s was written: %v", empty, ents)
	}

	// Without OpenExisting the registry is created; then it opens with.
	reg := filepath.Join(parent, "reg")
	st, err := OpenStore(ctx, Config{DataDir: reg})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	s, err := Open(ctx, Config{DataDir: reg, OpenExisting: true})
	if err != nil {
		t.Fatalf("an existing registry: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestOpenExistingPostgres: a PostgreSQL database no plugkit migrated
// holds no registry. With OpenExisting, OpenStore fails with ErrNoRegistry
// and leaves it without a schema, every time; Migrate creates the schema
// (how a registry there begins), and then the database opens.
func TestOpenExistingPostgres(t *testing.T) {
	pg := testservice.StartPostgres(t)
	t.Setenv("PGPASSWORD", pg.Password)
	ctx := context.Background()
	cfg := Config{DatabaseURL: pg.NewDatabase(t), OpenExisting: true}
	for range 2 { // the first refusal created nothing the second could find
		st, err := OpenStore(ctx, cfg)
		if !errors.Is(err, ErrNoRegistry) || !strings.Contains(err.Error(), "never migrated") {
			t.Fatalf("OpenStore of a fresh database: %v, want ErrNoRegistry", err)
		}
		if err == nil {
			st.Close()
		}
	}
	if _, err := Migrate(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	st, err := OpenStore(ctx, cfg)
	if err != nil {
		t.Fatalf("a migrated database: %v", err)
	}
	st.Close()
}

// TestExclusive: one Exclusive storage holds a data directory at a time;
// the second is refused with ErrInUse, naming the directory and the
// holder, until the first closes. Storage that is not Exclusive (the
// maintenance verbs) opens beside it.
func TestExclusive(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "reg")
	first, err := Open(ctx, Config{DataDir: dir, Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, Config{DataDir: dir, Exclusive: true})
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("second Exclusive Open: %v, want ErrInUse naming %s and this process", err, dir)
	}
	shared, err := Open(ctx, Config{DataDir: dir, OpenExisting: true})
	if err != nil {
		t.Fatalf("a storage that is not Exclusive: %v", err)
	}
	shared.Close()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(ctx, Config{DataDir: dir, Exclusive: true})
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	again.Close()
}
