package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/plugkit/plugkit/registry/store"
)

// TestMigrateAddsTokens: a database of the first schema is upgraded in
// place to one that keeps tokens.
func TestMigrateAddsTokens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.db")
	old, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(migrations[0]); err != nil {
		t.Fatal(err)
	}
	old.Close()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	sum := sha256.Sum256([]byte("s"))
	if err := db.AddToken(ctx, store.Token{ID: "token:0000000000000001", Role: store.RoleAdmin, CreatedAt: time.Now()}, sum); err != nil {
		t.Fatal(err)
	}
	if tok, err := db.TokenBySum(ctx, sum); err != nil || tok.Role != store.RoleAdmin {
		t.Fatalf("%+v %v", tok, err)
	}
	var version int
	db.w.QueryRow(`PRAGMA user_version`).Scan(&version)
	if version != len(migrations) {
		t.Fatalf("user_version %d, want %d", version, len(migrations))
	}
}
