package registry

import (
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
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"internal","message":"internal error"}}`)
	}
	writeJSONBytes(w, status, append(b, '\n'))
}

// writeJSONBytes answers an encoded JSON document. Metadata changes with
// every publish, so HTTP caches must not keep it.
func writeJSONBytes(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(b)
}
