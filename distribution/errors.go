package distribution

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/plugkit/plugkit/agentplugin"
)

// Error codes of the protocol: the "code" of an error body. They are stable;
// docs/protocol.md says which status carries each.
const (
	CodeBadRequest       = "bad_request"        // 400: malformed path, query or body
	CodeUnknownParameter = "unknown_parameter"  // 400: a query parameter the endpoint does not take
	CodeInvalidDigest    = "invalid_digest"     // 400: not "sha256:" and 64 lowercase hex digits
	CodeInvalidArchive   = "invalid_archive"    // 400: the published body is not a safe archive
	CodeUnauthorized     = "unauthorized"       // 401: no token where one is needed, or an unknown token
	CodeForbidden        = "forbidden"          // 403: a valid token without the needed role
	CodeNotOwner         = "not_owner"          // 403: the plugin belongs to other identities
	CodeNotFound         = "not_found"          // 404: no such plugin, release, channel or artifact
	CodeMethodNotAllowed = "method_not_allowed" // 405
	CodeVersionConflict  = "version_conflict"   // 409: the version exists with another digest
	CodeReleaseYanked    = "release_yanked"     // 409: a channel cannot point at a yanked release
	CodeQuotaExceeded    = "quota_exceeded"     // 409: a per-plugin quota (releases, channels, installations)
	CodeUploadTooSlow    = "upload_too_slow"    // 408: a publish body slower than the minimum rate
	CodeTooLarge         = "too_large"          // 413: body or archive over a limit
	CodeUnsupportedMedia = "unsupported_media"  // 415: a JSON endpoint given another content type
	CodePluginRejected   = "plugin_rejected"    // 422: the loader rejected the plugin; see diagnostics
	CodeInternal         = "internal"           // 500
	CodeBusy             = "busy"               // 503: every upload slot is taken; see Retry-After
)

// ErrStatus is matched (with errors.Is) by every *StatusError.
var ErrStatus = errors.New("registry refused the request")

// StatusError is a registry response with a status other than 2xx. It
// never carries the response body as such: only the status, the error code
// when the body had a well-formed one, and the loader's diagnostics on a 422.
type StatusError struct {
	Status int
	// Code is the protocol error code, "" when the body had none.
	Code string
	// RetryAfter is the server's Retry-After in seconds on a 503 or 429,
	// 0 when it gave none.
	RetryAfter int
	// Diagnostics explain a CodePluginRejected. They come from the server:
	// print them as data, not as trusted text.
	Diagnostics []agentplugin.Diagnostic
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("registry: HTTP %d %s", e.Status, http.StatusText(e.Status))
	if e.Code != "" {
		msg += " (" + e.Code + ")"
	}
	return msg
}

// Is makes errors.Is(err, ErrStatus) true for every StatusError.
func (e *StatusError) Is(target error) bool { return target == ErrStatus }

// Errors the client returns, each matchable with errors.Is.
var (
	// ErrDigestMismatch: the artifact's bytes do not hash to the digest
	// that was asked for. Nothing was unpacked or loaded.
	ErrDigestMismatch = errors.New("artifact digest mismatch")
	// ErrInsecureURL: a base URL or redirect target that is not https and
	// not on a loopback address, or that is not an absolute http(s) URL.
	ErrInsecureURL = errors.New("registry URL must be https (http only on loopback)")
	// ErrInvalidPath: a Request path that does not start with "/", holds a
	// traversal, a query, a fragment or another origin.
	ErrInvalidPath = errors.New("invalid request path")
	// ErrTooLarge: a response larger than the client's limit.
	ErrTooLarge = errors.New("response too large")
	// ErrInvalidResponse: a 2xx response the client cannot decode, or a
	// listing whose cursors do not advance.
	ErrInvalidResponse = errors.New("invalid registry response")
	// ErrNoPlugin: Plugin asked for a plugin the registry does not have.
	ErrNoPlugin = errors.New("no such plugin on the registry")
	// ErrReleaseMismatch: what the registry answered is not what was
	// asked for (Fetch): another plugin, another release, or an artifact
	// whose manifest disagrees with its release.
	ErrReleaseMismatch = errors.New("the registry answered another release")
)
