package store

import (
	"context"
	"crypto/sha256"
	"time"
)

// Roles a database token may have, as the registry names them.
const (
	RoleReader    = "reader"
	RolePublisher = "publisher"
	RoleAdmin     = "admin"
)

// Token is a token kept in the database. The secret itself is never
// stored: only its SHA-256, which is what a request's bearer token is
// looked up by.
type Token struct {
	// ID identifies the token in `plugkit serve token list/revoke`, and
	// is its identity for ownership: "token:" and 16 hex digits, the
	// form distribution.CheckIdentity accepts, which no NAME=SECRET
	// environment token can take (a NAME holds no ':').
	ID string `json:"id"`
	// Name is a label for people; it need not be unique.
	Name string `json:"name"`
	// Role is RoleReader, RolePublisher or RoleAdmin.
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"created_at"`
	// RevokedAt is set once the token is revoked; a revoked token
	// authenticates nothing.
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// Tokens is implemented by stores that keep tokens, so that tokens can be
// added and revoked while every replica runs. Both plugkit stores do.
type Tokens interface {
	// AddToken records t with the SHA-256 of its secret. An ID or hash
	// that exists is an error.
	AddToken(ctx context.Context, t Token, sum [sha256.Size]byte) error
	// ListTokens returns every token, revoked ones too, by creation.
	ListTokens(ctx context.Context) ([]Token, error)
	// RevokeToken revokes a token and returns it; ErrNotFound for an
	// unknown ID. Revoking twice keeps the first date.
	RevokeToken(ctx context.Context, id string) (Token, error)
	// TokenBySum returns the unrevoked token whose secret hashes to sum,
	// or ErrNotFound.
	TokenBySum(ctx context.Context, sum [sha256.Size]byte) (Token, error)
}
