package command

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/oci"
	"github.com/plugkit/plugkit/snapshot"
	"github.com/plugkit/plugkit/source"
	"github.com/plugkit/plugkit/trust"
)

// Exit codes.
const (
	ExitOK          = 0
	ExitFailed      = 1
	ExitUsage       = 2
	ExitInterrupted = 130
)

// Error codes of the --json failure document. They are a stable interface,
// listed in docs/cli.md: add codes, never rename them.
const (
	CodeUsage       = "usage"               // wrong flags or arguments
	CodeIO          = "io"                  // a file or directory could not be read or written
	CodeFailed      = "failed"              // the operation failed or was refused
	CodeRejected    = "plugin-rejected"     // the specification requires rejecting the plugin
	CodeInvalid     = "plugin-invalid"      // the plugin loaded with error diagnostics
	CodeLimit       = "limit-exceeded"      // a named limit was hit
	CodeArchive     = "archive-invalid"     // an archive was refused
	CodeDigest      = "digest-mismatch"     // bytes did not hash to the digest asked for
	CodeRegistry    = "registry-refused"    // a registry answered with an error status
	CodeInterrupted = "interrupted"         // SIGINT or SIGTERM
	CodeNotPlugin   = "not-a-plugin"        // an OCI artifact is not a plugin of the profile (index, types, config)
	CodeAmbiguous   = "ambiguous-reference" // a layout holds several plugins: give the digest
	CodeNotFound    = "not-found"           // no plugin manifest under that tag or digest
	CodeMismatch    = "release-mismatch"    // a registry answered another plugin or release than asked

	// Codes of the verbs that change a plugin home (install, update,
	// remove, sync, policy) and check it.
	CodeConsent        = "consent-required" // a change needs consent that was refused or not given
	CodeConflict       = "name-conflict"    // a plugin of that name is installed from another source
	CodeNotInstalled   = "not-installed"    // no installed plugin has that name
	CodeBusy           = "home-busy"        // another plugkit kept the home locked
	CodeSourceChanged  = "source-changed"   // a source gives other bytes than the lock records
	CodeModified       = "tree-modified"    // an installed tree differs from its file list or the lock
	CodeLockInvalid    = "lock-invalid"     // plugkit.lock cannot be read as a lock file
	CodePolicyMismatch = "policy-mismatch"  // the home holds another trust policy than the lock records
	CodePolicyMissing  = "policy-missing"   // the lock records a trust policy and the home has none
	CodeLockMismatch   = "lock-mismatch"    // a tree holds another plugin, version or launch surface than its lock entry

	// Codes of the signing verbs (key generate, sign, attest, verify).
	CodeNotVerified   = "not-verified"   // no valid signature satisfies what verify was asked
	CodePolicyRefused = "policy-refused" // the trust policy refuses the plugin
	CodePolicyInvalid = "policy-invalid" // the trust policy file cannot be used
	CodePassword      = "wrong-password" // an encrypted private key did not open with the password
)

// ExitError makes a command end with a given exit code. A nil err means the
// command already reported everything and only the code remains. Code, when
// set, overrides the error code that errorCode would derive.
type ExitError struct {
	code int
	err  error
	// errCode is the --json error code; "" derives it from err.
	errCode string
	// diagnostics go into the --json failure document.
	diagnostics []agentplugin.Diagnostic
}

func (e *ExitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *ExitError) Unwrap() error { return e.err }

// Exit ends a command with exit code code after it reported everything
// itself.
func Exit(code int) error { return &ExitError{code: code} }

// Failed ends a command with exit code 1: the input is invalid or the
// operation failed. Failed(nil) ends it silently: the verb has reported
// everything already.
func Failed(err error) error { return &ExitError{code: ExitFailed, err: err} }

// Usage ends a command with exit code 2: a usage or I/O error.
func Usage(err error) error { return &ExitError{code: ExitUsage, err: err} }

// WithCode sets the --json error code of err, an error from failed or usage
// (or any error, which then exits 1).
func WithCode(code string, err error) error {
	var ee *ExitError
	if errors.As(err, &ee) {
		c := *ee
		c.errCode = code
		return &c
	}
	return &ExitError{code: ExitFailed, err: err, errCode: code}
}

// WithDiagnostics attaches diagnostics to the --json failure document of
// err.
func WithDiagnostics(err error, ds []agentplugin.Diagnostic) error {
	var ee *ExitError
	if errors.As(err, &ee) {
		c := *ee
		c.diagnostics = ds
		return &c
	}
	return &ExitError{code: ExitFailed, err: err, diagnostics: ds}
}

// ErrorDoc is the one JSON document a --json verb prints on failure when it
// printed nothing else.
type ErrorDoc struct {
	Error       ErrorDetail              `json:"error"`
	Diagnostics []agentplugin.Diagnostic `json:"diagnostics"`
}

// ErrorDetail names an error in a JSON document: its documented code and
// its message.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ExitCode is the exit code err calls for.
func ExitCode(err error) int {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.code
	}
	// Errors cobra raises itself (unknown command, wrong argument count)
	// are usage errors.
	return ExitUsage
}

// Detail is the ErrorDetail of err, for documents that carry errors of
// their own (one per plugin); err has its exit code already (Failed,
// Usage), as a verb returns it.
func Detail(err error) *ErrorDetail {
	return &ErrorDetail{Code: errorCode(err, ExitCode(err)), Message: err.Error()}
}

// errorCode is the documented code that names err in the --json failure
// document.
func errorCode(err error, exit int) string {
	var ee *ExitError
	if errors.As(err, &ee) && ee.errCode != "" {
		return ee.errCode
	}
	var se *distribution.StatusError
	var rej *agentplugin.RejectedError
	switch {
	case exit == ExitInterrupted:
		return CodeInterrupted
	case errors.As(err, &rej):
		return CodeRejected
	case errors.Is(err, snapshot.ErrLimit):
		return CodeLimit
	case errors.Is(err, distribution.ErrDigestMismatch), errors.Is(err, oci.ErrDescriptor):
		return CodeDigest
	case errors.Is(err, distribution.ErrReleaseMismatch):
		return CodeMismatch
	case errors.Is(err, oci.ErrIndex), errors.Is(err, oci.ErrNotPlugin), errors.Is(err, oci.ErrConfig):
		return CodeNotPlugin
	case errors.Is(err, oci.ErrAmbiguous):
		return CodeAmbiguous
	case errors.Is(err, oci.ErrNoPlugin):
		return CodeNotFound
	case errors.Is(err, trust.ErrNotVerified):
		return CodeNotVerified
	case errors.Is(err, trust.ErrRefused):
		return CodePolicyRefused
	case errors.Is(err, trust.ErrPassword):
		return CodePassword
	}
	switch {
	case errors.As(err, &se):
		return CodeRegistry
	case errors.Is(err, source.ErrArchive), IsArchiveError(err):
		return CodeArchive
	case exit == ExitUsage && IsIOError(err):
		return CodeIO
	case exit == ExitUsage:
		return CodeUsage
	}
	return CodeFailed
}

// IsIOError reports whether err comes from the operating system (a file
// that cannot be read, a directory that cannot be written).
func IsIOError(err error) bool {
	var pe *fs.PathError
	var le *os.LinkError
	var se *os.SyscallError
	return errors.As(err, &pe) || errors.As(err, &le) || errors.As(err, &se)
}

// IsArchiveError reports whether archive.Unpack refused its input: an
// error about one entry, or about the archive as a whole (its gzip stream,
// its end).
func IsArchiveError(err error) bool {
	var ee *archive.EntryError
	if errors.As(err, &ee) {
		return true
	}
	for _, reason := range []error{archive.ErrGzip, archive.ErrTruncated, archive.ErrTrailingData, archive.ErrSize,
		archive.ErrDuplicate, archive.ErrConflict, archive.ErrOutsideRoot} {
		if errors.Is(err, reason) {
			return true
		}
	}
	return false
}

// isSilent reports whether err carries only an exit code: the verb has
// already said everything.
func isSilent(err error) bool {
	var ee *ExitError
	return errors.As(err, &ee) && ee.err == nil
}

// Usagef is an error about the command line: exit 2, code "usage".
func Usagef(format string, a ...any) error {
	return &ExitError{code: ExitUsage, err: fmt.Errorf(format, a...), errCode: CodeUsage}
}

// ErrorDiagnostics are the diagnostics a failure carries: attached ones, or
// a rejected plugin's.
func ErrorDiagnostics(err error) []agentplugin.Diagnostic {
	var ee *ExitError
	if errors.As(err, &ee) && ee.diagnostics != nil {
		return ee.diagnostics
	}
	if ds, ok := agentplugin.Diagnostics(err); ok {
		return ds
	}
	var se *distribution.StatusError
	if errors.As(err, &se) && len(se.Diagnostics) > 0 {
		return se.Diagnostics // a registry's reasons for refusing a plugin
	}
	return []agentplugin.Diagnostic{}
}

// Explain returns err after showing the diagnostics that explain it (a
// rejected plugin's, say): printed on stdout in text mode, like every
// verb's diagnostics; with --json they go into the failure document that
// RunContext prints.
func Explain(cmd *cobra.Command, err error) error {
	ds := ErrorDiagnostics(err)
	if len(ds) == 0 || JSONRequested(cmd) {
		return err
	}
	PrintDiagnostics(cmd.OutOrStdout(), ds)
	if _, rejected := agentplugin.Diagnostics(err); rejected {
		// The diagnostics were just printed: the message need not repeat
		// the first of them.
		return &SummaryError{Msg: "plugin rejected (" + Counts(ds) + ")", Err: err}
	}
	return err
}

// ErrorDiagnosticsRefused is how pack, push and publish refuse a plugin
// that loads with error diagnostics, which --allow-errors overrides: exit
// 1, code plugin-invalid, the diagnostics in the --json failure document.
// notDone and overrides word the message: "not pushed (--allow-errors
// pushes it anyway)".
func ErrorDiagnosticsRefused(path, notDone, overrides string, ds []agentplugin.Diagnostic) error {
	return WithDiagnostics(WithCode(CodeInvalid, Failed(&SummaryError{
		Msg: path + " has error diagnostics: not " + notDone + " (--allow-errors " + overrides + " it anyway)",
	})), ds)
}

// SummaryError replaces the message of err, keeping err for errors.Is/As
// (the exit code, the --json error code).
type SummaryError struct {
	Msg string
	Err error
}

func (e *SummaryError) Error() string { return e.Msg }
func (e *SummaryError) Unwrap() error { return e.Err }

// Counts summarises diagnostics: "1 error, 2 warnings".
func Counts(ds []agentplugin.Diagnostic) string {
	errs := 0
	for _, d := range ds {
		if d.Severity == agentplugin.Error {
			errs++
		}
	}
	return Plural(errs, "error") + ", " + Plural(len(ds)-errs, "warning")
}

// NonNil is ds, or an empty list: documents print "diagnostics": [], never
// null.
func NonNil(ds []agentplugin.Diagnostic) []agentplugin.Diagnostic {
	if ds == nil {
		return []agentplugin.Diagnostic{}
	}
	return ds
}

// writeErrorDoc prints the failure document of err.
func writeErrorDoc(w io.Writer, err error, exit int) error {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	return WriteJSON(w, ErrorDoc{
		Error:       ErrorDetail{Code: errorCode(err, exit), Message: msg},
		Diagnostics: ErrorDiagnostics(err),
	})
}
