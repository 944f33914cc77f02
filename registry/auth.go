package registry

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

// role is what a request may do; each role may do what the ones below it
// may.
type role int

const (
	anonymous role = iota
	reader
	publisher
	admin
)

var roleNames = [...]string{"anonymous", "reader", "publisher", "admin"}

func (r role) String() string { return roleNames[r] }

// principal is who a request is: its role and its token's identity.
type principal struct {
	role     role
	identity string
}

func (p principal) actor() store.Actor {
	return store.Actor{Identity: p.identity, Admin: p.role == admin}
}

// TokenIdentity returns the identity of a configured token entry: NAME for
// "NAME=SECRET", and "token:" with the first 16 hex digits of the
// secret's SHA-256 for a bare secret. An identity names a token holder in
// ownership and installation records, so a named token can be rotated
// (several secrets under one name) without losing its plugins.
//
// An entry is NAME=SECRET when the text before its first '=' is a valid
// identity name (distribution.CheckIdentity, without the "token:" form) and the text after it is not
// empty and does not start with '=': base64 padding ("c2VjcmV0==") is
// never mistaken for a name.
func TokenIdentity(entry string) string {
	id, _ := splitToken(entry)
	return id
}

func splitToken(entry string) (identity, secret string) {
	name, secret, ok := strings.Cut(entry, "=")
	if ok && secret != "" && secret[0] != '=' && !strings.Contains(name, ":") && distribution.CheckIdentity(name) == nil {
		return name, secret
	}
	sum := sha256.Sum256([]byte(entry))
	return "token:" + hex.EncodeToString(sum[:8]), entry
}

// tokenEntry is one configured token: the SHA-256 of its secret and who
// it is.
type tokenEntry struct {
	sum [sha256.Size]byte
	principal
}

// auth holds the configured tokens. Comparing fixed-size hashes in
// constant time, against every token without stopping at a match, keeps
// both a token's bytes and its length out of the response timing.
type auth struct {
	tokens    []tokenEntry
	anonymous bool // reads need no token
	reports   bool // installation reports and their listing need no token
	// db holds the tokens kept in the store, looked up when no
	// configured token matches; nil when the store keeps none.
	db *tokenDB
}

// newAuth parses the token lists. A secret configured twice with another
// identity or role is an error: which one a request gets would depend on
// the order of the lists.
func newAuth(cfg Config) (auth, error) {
	a := auth{anonymous: cfg.AnonymousRead, reports: cfg.AnonymousReports}
	seen := map[[sha256.Size]byte]principal{}
	for _, set := range []struct {
		role    role
		entries []string
	}{{reader, cfg.ReadTokens}, {publisher, cfg.PublishTokens}, {admin, cfg.AdminTokens}} {
		for _, e := range set.entries {
			e = strings.TrimSpace(e)
			if e == "" {
				continue
			}
			id, secret := splitToken(e)
			p := principal{role: set.role, identity: id}
			sum := sha256.Sum256([]byte(secret))
			if old, dup := seen[sum]; dup {
				if old != p {
					return auth{}, fmt.Errorf("registry: one secret is configured as %s %q and as %s %q", old.role, old.identity, p.role, p.identity)
				}
				continue
			}
			seen[sum] = p
			a.tokens = append(a.tokens, tokenEntry{sum: sum, principal: p})
		}
	}
	return a, nil
}

// who returns the principal of the request's bearer token. A request
// without an Authorization header is anonymous; one with a malformed
// header or an unknown token is a 401, even where anonymous access would
// do, so that a client with a wrong token learns it at once.
func (a *auth) who(r *http.Request) (principal, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return principal{}, nil
	}
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return principal{}, unauthorized("the Authorization header must be \"Bearer TOKEN\"")
	}
	sum := sha256.Sum256([]byte(token))
	match := -1
	for i := range a.tokens {
		if subtle.ConstantTimeCompare(a.tokens[i].sum[:], sum[:]) == 1 {
			match = i
		}
	}
	if match < 0 && a.db != nil {
		p, err := a.db.lookup(r.Context(), sum)
		if err != nil || p.role != anonymous {
			return p, err
		}
	}
	if match < 0 {
		return principal{}, unauthorized("unknown token")
	}
	return a.tokens[match].principal, nil
}

// require returns the request's principal when it has at least role min.
// Anonymous requests pass as readers when anonymousOK.
func (a *auth) require(r *http.Request, min role, anonymousOK bool) (principal, error) {
	p, err := a.who(r)
	switch {
	case err != nil:
		return p, err
	case p.role >= min, p.role == anonymous && anonymousOK && min <= reader:
		return p, nil
	case p.role == anonymous:
		return p, unauthorized(needsToken(min))
	}
	return p, &apiError{status: http.StatusForbidden, code: distribution.CodeForbidden, msg: needsToken(min)}
}

// needsToken says which token a request needs, with the article English
// wants ("an admin token").
func needsToken(min role) string {
	article := "a"
	if strings.ContainsRune("aeiou", rune(min.String()[0])) {
		article = "an"
	}
	return fmt.Sprintf("this request needs %s %s token", article, min)
}

// requireRead authorizes a read.
func (s *Server) requireRead(r *http.Request) error {
	_, err := s.auth.require(r, reader, s.auth.anonymous)
	return err
}

// requirePublish authorizes a write of the catalog and returns who makes
// it; whether they may write to the plugin is the store's to decide.
func (s *Server) requirePublish(r *http.Request) (store.Actor, error) {
	p, err := s.auth.require(r, publisher, false)
	return p.actor(), err
}

func unauthorized(msg string) *apiError {
	return &apiError{status: http.StatusUnauthorized, code: distribution.CodeUnauthorized, msg: msg}
}
