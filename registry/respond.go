package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/distribution"
)

// apiError is an error response of the protocol.
type apiError struct {
	status int
	code   string
	msg    string
	diags  []agentplugin.Diagnostic
}

func (e *apiError) Error() string { return e.code + ": " + e.msg }

func badRequest(code, msg string) *apiError {
	return &apiError{status: http.StatusBadRequest, code: code, msg: msg}
}

func notFound(msg string) *apiError {
	return &apiError{status: http.StatusNotFound, code: distribution.CodeNotFound, msg: msg}
}

// writeError answers err as a JSON error body. Errors that are not
// *apiError are internal: logged, and answered without detail.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		if r.Context().Err() != nil {
			return // the client is gone; nobody reads the answer
		}
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		ae = &apiError{status: http.StatusInternalServerError, code: distribution.CodeInternal, msg: "internal error"}
	}
	if ae.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="plugkit"`)
	}
	writeJSON(w, ae.status, distribution.ErrorBody{Error: distribution.ErrorDetail{
		Code: ae.code, Message: ae.msg, Diagnostics: ae.diags,
	}})
}

// writeJSON answers v.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"internal","message":"internal error"}}`+"\n")
	}
	writeJSONBytes(w, status, b)
}

// marshal encodes v as one line of JSON. HTML characters are not escaped:
// responses are application/json with nosniff, and unescaped text keeps
// every stored byte to at most two bytes of JSON, which page budgets
// count on.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writePage answers one page of a listing: {"FIELD": [...], "next_cursor":
// "..."}. items holds up to limit+1 entries, the last one only to tell
// that more follow. Entries are added while the page stays within budget
// bytes, and always at least one, so the listing moves on whatever the
// size of an entry.
func writePage[T any](w http.ResponseWriter, field string, items []T, limit, budget int, cursor func(T) string) error {
	var buf bytes.Buffer
	buf.WriteString(`{"` + field + `":[`)
	n := 0
	for ; n < len(items) && n < limit; n++ {
		b, err := marshal(items[n])
		if err != nil {
			return err
		}
		b = bytes.TrimSuffix(b, []byte("\n"))
		if n > 0 && buf.Len()+len(b)+1+pageTail > budget {
			break
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		buf.Write(b)
	}
	buf.WriteByte(']')
	if n < len(items) {
		c, _ := json.Marshal(cursor(items[n-1]))
		buf.WriteString(`,"next_cursor":`)
		buf.Write(c)
	}
	buf.WriteString("}\n")
	writeJSONBytes(w, http.StatusOK, buf.Bytes())
	return nil
}

// pageTail is room kept in a page's budget for its end and its cursor.
const pageTail = 1024

// The header values of every JSON answer. Each response's header map
// refers to these slices instead of new ones: net/http only reads them,
// and Set or Add on a response replace or copy them. Keys are in
// canonical form, so they are stored as Header.Set would.
var (
	jsonContentType = []string{"application/json"}
	jsonNoStore     = []string{"no-store"}
	jsonNoSniff     = []string{"nosniff"}
)

// writeJSONBytes answers an encoded JSON document. Metadata changes with
// every publish, so HTTP caches must not keep it.
func writeJSONBytes(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Cache-Control"] = jsonNoStore
	h["X-Content-Type-Options"] = jsonNoSniff
	w.WriteHeader(status)
	w.Write(b)
}
