package agentplugin

import (
	"errors"
	"fmt"
	"strings"
)

// Severity is how much a diagnostic matters.
type Severity string

// The severities. An error marks something invalid (the plugin, a component
// type, a component); a warning marks something reported and ignored.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Diagnostic is one problem found while loading. Codes are stable and listed
// in docs/diagnostics.md. Messages never repeat an env or header value.
type Diagnostic struct {
	Severity Severity `json:"severity"`
	Code     string   `json:"code"`
	Path     string   `json:"path,omitempty"`    // package-relative file
	Pointer  string   `json:"pointer,omitempty"` // RFC 6901 pointer (JSON) or key path (YAML) inside Path
	Line     int      `json:"line,omitempty"`    // 1-based, 0 when unknown
	Column   int      `json:"column,omitempty"`  // 1-based, in bytes, 0 when unknown
	Message  string   `json:"message"`
}

// String formats the diagnostic like a compiler does:
// "mcp.json:7:14: error[code]: message".
func (d Diagnostic) String() string {
	var b strings.Builder
	if d.Path != "" {
		b.WriteString(d.Path)
		if d.Line > 0 {
			fmt.Fprintf(&b, ":%d", d.Line)
			if d.Column > 0 {
				fmt.Fprintf(&b, ":%d", d.Column)
			}
		}
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "%s[%s]: %s", d.Severity, d.Code, d.Message)
	if d.Pointer != "" && d.Line == 0 {
		fmt.Fprintf(&b, " (at %s)", d.Pointer)
	}
	return b.String()
}

// ErrRejected is matched (with errors.Is) by every *RejectedError.
var ErrRejected = errors.New("plugin rejected")

// RejectedError is returned by Load when the specification requires the
// plugin to be rejected. Diagnostics holds every reason, and the warnings
// found before the rejection.
type RejectedError struct {
	Diagnostics []Diagnostic
}

func (e *RejectedError) Error() string {
	for _, d := range e.Diagnostics {
		if d.Severity == Error {
			return "plugin rejected: " + d.String()
		}
	}
	return "plugin rejected"
}

// Is makes errors.Is(err, ErrRejected) true.
func (e *RejectedError) Is(target error) bool { return target == ErrRejected }

// HasErrors reports whether any diagnostic is an error.
func HasErrors(ds []Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Diagnostics returns the diagnostics a *RejectedError carries, and whether
// err is one.
func Diagnostics(err error) ([]Diagnostic, bool) {
	var r *RejectedError
	if errors.As(err, &r) {
		return r.Diagnostics, true
	}
	return nil, false
}
