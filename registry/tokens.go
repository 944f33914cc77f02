package registry

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/plugkit/plugkit/registry/store"
)

// tokenPrefix starts every database token, so that one found in a log or
// a repository is recognisable (and a secret scanner can match it).
const tokenPrefix = "plugkit_"

// NewToken creates a database token with role (store.RoleReader,
// RolePublisher or RoleAdmin) and a name for people, stores only the
// SHA-256 of its secret, and returns the record and the secret. The secret
// cannot be recovered later: print it once.
func NewToken(ctx context.Context, ts store.Tokens, role, name string) (store.Token, string, error) {
	if _, ok := roleByName[role]; !ok {
		return store.Token{}, "", fmt.Errorf("registry: role %q: want reader, publisher or admin", role)
	}
	if err := checkText("name", name, 0, 128); err != nil {
		return store.Token{}, "", fmt.Errorf("registry: token %w", err)
	}
	var id [8]byte
	var secret [32]byte
	if _, err := rand.Read(id[:]); err != nil {
		return store.Token{}, "", err
	}
	if _, err := rand.Read(secret[:]); err != nil {
		return store.Token{}, "", err
	}
	t := store.Token{ID: "token:" + hex.EncodeToString(id[:]), Name: name, Role: role, CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
	text := tokenPrefix + base64.RawURLEncoding.EncodeToString(secret[:])
	if err := ts.AddToken(ctx, t, sha256.Sum256([]byte(text))); err != nil {
		return store.Token{}, "", fmt.Errorf("registry: add token: %w", err)
	}
	return t, text, nil
}

// roleByName maps a stored token's role onto the request roles.
var roleByName = map[string]role{store.RoleReader: reader, store.RolePublisher: publisher, store.RoleAdmin: admin}

// tokenDB authenticates the tokens kept in the store. With a change feed
// its answers, found or not, are cached until a token is added or revoked
// anywhere; without one every lookup asks the store (a primary-key read),
// so that a revocation by `plugkit serve token revoke` in another process
// takes effect at the next request.
type tokenDB struct {
	store store.Tokens
	cache *memo[[sha256.Size]byte, principal] // zero principal: no such token
}

// lookup returns the principal of the token whose secret hashes to sum.
func (d *tokenDB) lookup(ctx context.Context, sum [sha256.Size]byte) (principal, error) {
	p, _, err := d.cache.load(ctx, sum, func(ctx context.Context) (principal, error) {
		t, err := d.store.TokenBySum(ctx, sum)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return principal{}, nil
		case err != nil:
			return principal{}, err
		}
		r, known := roleByName[t.Role]
		if !known {
			return principal{}, fmt.Errorf("registry: token %s has the unknown role %q", t.ID, t.Role)
		}
		return principal{role: r, identity: t.ID}, nil
	})
	return p, err
}
