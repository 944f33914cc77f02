package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/plugkit/plugkit/registry/store"
	"github.com/plugkit/plugkit/registry/store/storetest"
)

func openTest(t *testing.T) *DB {
	t.Helper()
	db, _ := openTestPath(t)
	return db
}

// openTestPath opens a new database and also returns its path, for tests
// that open it a second time.
func openTestPath(t *testing.T) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "registry.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openTest(t) })
}

// TestMigrateFromFirstSchema opens a database written by the first
// release (schema 1, user_version 0): its plugins come through without an
// owner, so admin-only, and its installation reports keep an empty
// reporter.
func TestMigrateFromFirstSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "registry.db")
	old, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		migrations[0],
		`INSERT INTO plugins VALUES ('legacy', 'legacy', 'old', 1)`,
		`INSERT INTO releases VALUES ('legacy@1.0.0', 'legacy', '1.0.0', 'old', '` + storetest.Digest(1) + `', 10, 0, 1)`,
		`INSERT INTO channels VALUES ('legacy', 'stable', 'legacy@1.0.0', 1)`,
		`INSERT INTO installations VALUES ('host/legacy', 'legacy', 'legacy@1.0.0', '` + storetest.Digest(1) + `', 'installed', 'host', 5)`,
	} {
		if _, err := old.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()

	for range 2 { // the second open finds nothing to migrate
		db, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if rel, err := db.Channel(ctx, "legacy", "stable"); err != nil || rel.ID != "legacy@1.0.0" {
			t.Fatalf("release lost: %+v %v", rel, err)
		}
		if owners, err := db.Owners(ctx, "legacy"); err != nil || len(owners) != 0 {
			t.Fatalf("owners of a legacy plugin: %v %v", owners, err)
		}
		ins, err := db.Installations(ctx, store.InstallationQuery{Limit: 10})
		if err != nil || len(ins) != 1 || ins[0].ID != "host/legacy" || ins[0].Reporter != "" {
			t.Fatalf("installations: %+v %v", ins, err)
		}
		by := store.Actor{Identity: "someone"}
		if _, err := db.SetYanked(ctx, by, "legacy@1.0.0", true); !errors.Is(err, store.ErrNotOwner) {
			t.Fatalf("a publisher wrote to an ownerless legacy plugin: %v", err)
		}
		db.Close()
	}
}

// TestRefusesNewerSchema: a database from a newer plugkit is not touched.
func TestRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	db.Exec(`PRAGMA user_version = 99`)
	db.Close()
	if _, err := Open(path); err == nil {
		t.Fatal("opened a database of a newer schema")
	}
}

// BenchmarkPublish is the store's share of publish throughput, the anchor
// of postgres.BenchmarkPublish.
func BenchmarkPublish(b *testing.B) {
	db, err := Open(filepath.Join(b.TempDir(), "registry.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	storetest.BenchmarkPublish(b, db)
}
