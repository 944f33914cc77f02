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

// parseQuery parses a raw query strictly: every key must be one of allowed
// and appear at most once, escapes must be valid, and ';' is not a
// separator. It returns the values by key; an absent key is absent from the
// map.
func parseQuery(raw string, allowed ...string) (map[string]string, error) {
	out := map[string]string{}
	if raw == "" {
		return out, nil
	}
	if len(raw) > maxQuery {
		return nil, badRequest(distribution.CodeBadRequest, "query too long")
	}
	for pair := range strings.SplitSeq(raw, "&") {
		k, v, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil || strings.ContainsRune(k, ';') {
			return nil, badRequest(distribution.CodeBadRequest, "malformed query")
		}
		val, err := url.QueryUnescape(v)
		if err != nil || strings.ContainsRune(v, ';') {
			return nil, badRequest(distribution.CodeBadRequest, fmt.Sprintf("malformed query parameter %q", key))
		}
		known := false
		for _, a := range allowed {
			known = known || a == key
		}
		if !known {
			return nil, badRequest(distribution.CodeUnknownParameter, fmt.Sprintf("unknown query parameter %q", key))
		}
		if _, dup := out[key]; dup {
			return nil, badRequest(distribution.CodeBadRequest, fmt.Sprintf("query parameter %q given twice", key))
		}
		out[key] = val
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
