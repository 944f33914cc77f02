package cli

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
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// Error codes of the --json failure document. They are a stable interface,
// listed in docs/cli.md: add codes, never rename them.
const (
	codeUsage       = "usage"               // wrong flags or arguments
	codeIO          = "io"                  // a file or directory could not be read or written
	codeFailed      = "failed"              // the operation failed or was refused
	codeRejected    = "plugin-rejected"     // the specification requires rejecting the plugin
	codeInvalid     = "plugin-invalid"      // the plugin loaded with error diagnostics
	codeLimit       = "limit-exceeded"      // a named limit was hit
	codeArchive     = "archive-invalid"     // an archive was refused
	codeDigest      = "digest-mismatch"     // bytes did not hash to the digest asked for
	codeRegistry    = "registry-refused"    // a registry answered with an error status
	codeInterrupted = "interrupted"         // SIGINT or SIGTERM
	codeNotPlugin   = "not-a-plugin"        // an OCI artifact is not a plugin of the profile (index, types, config)
	codeAmbiguous   = "ambiguous-reference" // a layout holds several plugins: give the digest
	codeNotFound    = "not-found"           // no plugin manifest under that tag or digest
	codeMismatch    = "release-mismatch"    // a registry answered another plugin or release than asked

	// Codes of the verbs that change a plugin home (install, update,
	// remove, sync) and check it.
	codeConsent        = "consent-required" // a change needs consent that was refused or not given
	codeConflict       = "name-conflict"    // a plugin of that name is installed from another source
	codeNotInstalled   = "not-installed"    // no installed plugin has that name
	codeBusy           = "home-busy"        // another plugkit kept the home locked
	codeSourceChanged  = "source-changed"   // a source gives other bytes than the lock records
	codeModified       = "tree-modified"    // an installed tree differs from its file list or the lock
	codeLockInvalid    = "lock-invalid"     // plugkit.lock cannot be read as a lock file
	codePolicyMismatch = "policy-mismatch"  // sync: the lock names another trust policy than the home's

	// Codes of the signing verbs (key generate, sign, attest, verify).
	codeNotVerified   = "not-verified"   // no valid signature satisfies what verify was asked
	codePolicyRefused = "policy-refused" // the trust policy refuses the plugin
	codePolicyInvalid = "policy-invalid" // the trust policy file cannot be used
	codePassword      = "wrong-password" // an encrypted private key did not open with the password
)

// exitError makes a command end with a given exit code. A nil err means the
// command already reported everything and only the code remains. Code, when
// set, overrides the error code that errorCode would derive.
type exitError struct {
	code int
	err  error
	// errCode is the --json error code; "" derives it from err.
	errCode string
	// diagnostics go into the --json failure document.
	diagnostics []agentplugin.Diagnostic
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// failed ends a command with exit code 1: the input is invalid or the
// operation failed.
func failed(err error) error { return &exitError{code: exitFailed, err: err} }

// usage ends a command with exit code 2: a usage or I/O error.
func usage(err error) error { return &exitError{code: exitUsage, err: err} }

// withCode sets the --json error code of err, an error from failed or usage
// (or any error, which then exits 1).
func withCode(code string, err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		c := *ee
		c.errCode = code
		return &c
	}
	return &exitError{code: exitFailed, err: err, errCode: code}
}

// withDiagnostics attaches diagnostics to the --json failure document of
// err.
func withDiagnostics(err error, ds []agentplugin.Diagnostic) error {
	var ee *exitError
	if errors.As(err, &ee) {
		c := *ee
		c.diagnostics = ds
		return &c
	}
	return &exitError{code: exitFailed, err: err, diagnostics: ds}
}

// errorDoc is the one JSON document a --json verb prints on failure when it
// printed nothing else.
type errorDoc struct {
	Error       errorDetail              `json:"error"`
	Diagnostics []agentplugin.Diagnostic `json:"diagnostics"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// exitCode is the exit code err calls for.
func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	// Errors cobra raises itself (unknown command, wrong argument count)
	// are usage errors.
	return exitUsage
}

// errorCode is the documented code that names err in the --json failure
// document.
func errorCode(err error, exit int) string {
	var ee *exitError
	if errors.As(err, &ee) && ee.errCode != "" {
		return ee.errCode
	}
	var se *distribution.StatusError
	var rej *agentplugin.RejectedError
	switch {
	case exit == exitInterrupted:
		return codeInterrupted
	case errors.As(err, &rej):
		return codeRejected
	case errors.Is(err, snapshot.ErrLimit):
		return codeLimit
	case errors.Is(err, distribution.ErrDigestMismatch), errors.Is(err, oci.ErrDescriptor):
		return codeDigest
	case errors.Is(err, distribution.ErrReleaseMismatch):
		return codeMismatch
	case errors.Is(err, oci.ErrIndex), errors.Is(err, oci.ErrNotPlugin), errors.Is(err, oci.ErrConfig):
		return codeNotPlugin
	case errors.Is(err, oci.ErrAmbiguous):
		return codeAmbiguous
	case errors.Is(err, oci.ErrNoPlugin):
		return codeNotFound
	case errors.Is(err, trust.ErrNotVerified):
		return codeNotVerified
	case errors.Is(err, trust.ErrRefused):
		return codePolicyRefused
	case errors.Is(err, trust.ErrPassword):
		return codePassword
	case errors.As(err, &se):
		return codeRegistry
	case errors.Is(err, source.ErrArchive), isArchiveError(err):
		return codeArchive
	case exit == exitUsage && isIOError(err):
		return codeIO
	case exit == exitUsage:
		return codeUsage
	}
	return codeFailed
}

// isIOError reports whether err comes from the operating system (a file
// that cannot be read, a directory that cannot be written).
func isIOError(err error) bool {
	var pe *fs.PathError
	var le *os.LinkError
	var se *os.SyscallError
	return errors.As(err, &pe) || errors.As(err, &le) || errors.As(err, &se)
}

// isArchiveError reports whether archive.Unpack refused its input: an
// error about one entry, or about the archive as a whole (its gzip stream,
// its end).
func isArchiveError(err error) bool {
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
	var ee *exitError
	return errors.As(err, &ee) && ee.err == nil
}

// usagef is an error about the command line: exit 2, code "usage".
func usagef(format string, a ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, a...), errCode: codeUsage}
}

// errorDiagnostics are the diagnostics a failure carries: attached ones, or
// a rejected plugin's.
func errorDiagnostics(err error) []agentplugin.Diagnostic {
	var ee *exitError
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

// explain returns err after showing the diagnostics that explain it (a
// rejected plugin's, say): printed on stdout in text mode, like every
// verb's diagnostics; with --json they go into the failure document that
// runContext prints.
func explain(cmd *cobra.Command, err error) error {
	ds := errorDiagnostics(err)
	if len(ds) == 0 || jsonRequested(cmd) {
		return err
	}
	printDiagnostics(cmd.OutOrStdout(), ds)
	if _, rejected := agentplugin.Diagnostics(err); rejected {
		// The diagnostics were just printed: the message need not repeat
		// the first of them.
		return &summaryError{msg: "plugin rejected (" + counts(ds) + ")", err: err}
	}
	return err
}

// summaryError replaces the message of err, keeping err for errors.Is/As
// (the exit code, the --json error code).
type summaryError struct {
	msg string
	err error
}

func (e *summaryError) Error() string { return e.msg }
func (e *summaryError) Unwrap() error { return e.err }

// counts summarises diagnostics: "1 error, 2 warnings".
func counts(ds []agentplugin.Diagnostic) string {
	errs := 0
	for _, d := range ds {
		if d.Severity == agentplugin.Error {
			errs++
		}
	}
	return plural(errs, "error") + ", " + plural(len(ds)-errs, "warning")
}

// nonNil is ds, or an empty list: documents print "diagnostics": [], never
// null.
func nonNil(ds []agentplugin.Diagnostic) []agentplugin.Diagnostic {
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
	return writeJSON(w, errorDoc{
		Error:       errorDetail{Code: errorCode(err, exit), Message: msg},
		Diagnostics: errorDiagnostics(err),
	})
}
