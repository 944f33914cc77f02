package registry

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/plugkit/plugkit/distribution"
)

// role is what a request may do.
type role int

const (
	anonymous role = iota
	reader
	publisher
)

// auth holds the SHA-256 of each configured token. Comparing fixed-size
// hashes in constant time, against every token without stopping at a match,
// keeps both a token's bytes and its length out of the response timing.
type auth struct {
	publish   [][sha256.Size]byte
	read      [][sha256.Size]byte
	anonymous bool // reads need no token
}

func newAuth(publish, read []string, anonymousRead bool) auth {
	hash := func(tokens []string) [][sha256.Size]byte {
		var out [][sha256.Size]byte
		for _, t := range tokens {
			if t = strings.TrimSpace(t); t != "" {
				out = append(out, sha256.Sum256([]byte(t)))
			}
		}
		return out
	}
	return auth{publish: hash(publish), read: hash(read), anonymous: anonymousRead}
}

func matchAny(set [][sha256.Size]byte, h [sha256.Size]byte) bool {
	found := 0
	for i := range set {
		found |= subtle.ConstantTimeCompare(set[i][:], h[:])
	}
	return found == 1
}

// role returns the role of the request's bearer token. A request without
// an Authorization header is anonymous; one with a malformed header or an
// unknown token is a 401, even where anonymous access would do, so that a
// client with a wrong token learns it at once.
func (a auth) role(r *http.Request) (role, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return anonymous, nil
	}
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return anonymous, unauthorized("the Authorization header must be \"Bearer TOKEN\"")
	}
	sum := sha256.Sum256([]byte(token))
	// Both sets are always compared, so the role does not show in timing.
	isPublisher, isReader := matchAny(a.publish, sum), matchAny(a.read, sum)
	switch {
	case isPublisher:
		return publisher, nil
	case isReader:
		return reader, nil
	}
	return anonymous, unauthorized("unknown token")
}

// requireRead authorizes a read.
func (s *Server) requireRead(r *http.Request) error {
	ro, err := s.auth.role(r)
	if err != nil {
		return err
	}
	if ro == anonymous && !s.auth.anonymous {
		return unauthorized("this registry needs a token to read")
	}
	return nil
}

// requirePublish authorizes a write of the catalog.
func (s *Server) requirePublish(r *http.Request) error {
	ro, err := s.auth.role(r)
	switch {
	case err != nil:
		return err
	case ro == anonymous:
		return unauthorized("publishing needs a publisher token")
	case ro != publisher:
		return &apiError{status: http.StatusForbidden, code: distribution.CodeForbidden, msg: "this token may not publish"}
	}
	return nil
}

func unauthorized(msg string) *apiError {
	return &apiError{status: http.StatusUnauthorized, code: distribution.CodeUnauthorized, msg: msg}
}
