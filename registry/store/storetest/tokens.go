package storetest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/plugkit/plugkit/registry/store"
)

// testTokens checks the database tokens of a store.Tokens: added with the
// hash of their secret, found by it until revoked, listed with their dates,
// never two with one ID or one secret.
func testTokens(t *testing.T, s store.Store) {
	ts, ok := s.(store.Tokens)
	if !ok {
		t.Fatalf("%T does not implement store.Tokens", s)
	}
	ctx := context.Background()
	created := time.Unix(1700000000, 0).UTC()
	add := func(id, name, role, secret string) error {
		return ts.AddToken(ctx, store.Token{ID: id, Name: name, Role: role, CreatedAt: created}, sha256.Sum256([]byte(secret)))
	}
	if list, err := ts.ListTokens(ctx); err != nil || list == nil || len(list) != 0 {
		t.Fatalf("empty list: %#v %v", list, err)
	}
	for i, role := range []string{store.RoleReader, store.RolePublisher, store.RoleAdmin} {
		if err := add(fmt.Sprintf("token:%016x", i), "ci "+role, role, "secret-"+role); err != nil {
			t.Fatal(err)
		}
	}
	if err := add("token:0000000000000000", "again", store.RoleReader, "other"); err == nil {
		t.Fatal("a second token with one ID")
	}
	if err := add("token:00000000000000ff", "same secret", store.RoleReader, "secret-reader"); err == nil {
		t.Fatal("a second token with one secret")
	}
	if err := add("token:00000000000000fe", "bad role", "root", "x"); err == nil {
		t.Fatal("a token with an unknown role")
	}
	got, err := ts.TokenBySum(ctx, sha256.Sum256([]byte("secret-publisher")))
	if err != nil || got.ID != "token:0000000000000001" || got.Role != store.RolePublisher || got.Name != "ci publisher" ||
		!got.CreatedAt.Equal(created) || got.RevokedAt != nil {
		t.Fatalf("by sum: %+v %v", got, err)
	}
	if _, err := ts.TokenBySum(ctx, sha256.Sum256([]byte("nope"))); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown secret: %v", err)
	}
	rev, err := ts.RevokeToken(ctx, "token:0000000000000001")
	if err != nil || rev.RevokedAt == nil || rev.Role != store.RolePublisher {
		t.Fatalf("revoke: %+v %v", rev, err)
	}
	if _, err := ts.TokenBySum(ctx, sha256.Sum256([]byte("secret-publisher"))); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a revoked token authenticates: %v", err)
	}
	again, err := ts.RevokeToken(ctx, "token:0000000000000001")
	if err != nil || !again.RevokedAt.Equal(*rev.RevokedAt) {
		t.Fatalf("second revoke: %+v %v", again, err)
	}
	if _, err := ts.RevokeToken(ctx, "token:00000000000000aa"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoke unknown: %v", err)
	}
	list, err := ts.ListTokens(ctx)
	if err != nil || len(list) != 3 || list[0].Role != store.RoleReader || list[1].RevokedAt == nil || list[2].RevokedAt != nil {
		t.Fatalf("list: %+v %v", list, err)
	}
}
