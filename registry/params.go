package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/plugkit/plugkit/distribution"
)

// maxJSONBody bounds the JSON request bodies (channels, yank,
// installations): each is a handful of short fields.
const maxJSONBody = 64 << 10

// maxQuery bounds a raw query string; the longest valid one (a plugin and a
// release ID) is well under it.
const maxQuery = 1024

// maxParams is the most query parameters an endpoint takes.
const maxParams = 3

// query is a parsed query string: its parameters in the order given. It is
// a value, not a map, so that parsing the query of a resolve (the hot
// path) allocates nothing.
type query struct {
	params [maxParams]struct{ key, val string }
	n      int
}

// lookup returns the value of key and whether the query has it.
func (q *query) lookup(key string) (string, bool) {
	for _, p := range q.params[:q.n] {
		if p.key == key {
			return p.val, true
		}
	}
	return "", false
}

// get returns the value of key, or "" when the query does not have it.
func (q *query) get(key string) string {
	v, _ := q.lookup(key)
	return v
}

// parseQuery parses a raw query strictly: every key must be one of allowed
// (at most maxParams) and appear at most once, escapes must be valid, and
// ';' is not a separator.
func parseQuery(raw string, allowed ...string) (query, error) {
	var out query
	if len(allowed) > maxParams {
		panic("registry: parseQuery takes at most maxParams parameters")
	}
	if raw == "" {
		return out, nil
	}
	if len(raw) > maxQuery {
		return out, badRequest(distribution.CodeBadRequest, "query too long")
	}
	for pair := range strings.SplitSeq(raw, "&") {
		k, v, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil || strings.ContainsRune(k, ';') {
			return out, badRequest(distribution.CodeBadRequest, "malformed query")
		}
		val, err := url.QueryUnescape(v)
		if err != nil || strings.ContainsRune(v, ';') {
			return out, badRequest(distribution.CodeBadRequest, fmt.Sprintf("malformed query parameter %q", key))
		}
		known := false
		for _, a := range allowed {
			known = known || a == key
		}
		if !known {
			return out, badRequest(distribution.CodeUnknownParameter, fmt.Sprintf("unknown query parameter %q", key))
		}
		if _, dup := out.lookup(key); dup {
			return out, badRequest(distribution.CodeBadRequest, fmt.Sprintf("query parameter %q given twice", key))
		}
		// Keys are allowed and distinct, so there are at most
		// len(allowed) of them.
		out.params[out.n].key, out.params[out.n].val = key, val
		out.n++
	}
	return out, nil
}

// decodeJSON reads a request body of exactly one JSON object into v,
// refusing another content type, unknown fields, trailing data and bodies
// over maxJSONBody.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return &apiError{status: http.StatusUnsupportedMediaType, code: distribution.CodeUnsupportedMedia, msg: "the body must be application/json"}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return &apiError{status: http.StatusRequestEntityTooLarge, code: distribution.CodeTooLarge, msg: fmt.Sprintf("the body exceeds %d bytes", maxJSONBody)}
	}
	if err != nil {
		return badRequest(distribution.CodeBadRequest, "unreadable body")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest(distribution.CodeBadRequest, "invalid JSON body: "+err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest(distribution.CodeBadRequest, "invalid JSON body: data after the object")
	}
	return nil
}

// noQuery refuses any query on an endpoint that takes none.
func noQuery(r *http.Request) error {
	_, err := parseQuery(r.URL.RawQuery)
	return err
}
