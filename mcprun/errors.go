package mcprun

import "errors"

// ErrInvalidServer is matched by every error that makes a server entry
// invalid under spec section 7.2.2: such a server is skipped, never started,
// and the plugin's other servers are unaffected. The more specific errors
// below all match it too.
var ErrInvalidServer = errors.New("invalid MCP server")

// Errors that make a server invalid. Each wraps ErrInvalidServer, so
// errors.Is(err, ErrEscape) and errors.Is(err, ErrInvalidServer) both hold.
var (
	// ErrEscape: a command or cwd resolves (links included) outside the
	// plugin root, or a ${PLUGIN_DATA} cwd outside the data directory.
	ErrEscape = wrapInvalid("path escapes its root")
	// ErrNotExecutable: a plugin-relative command is not a regular file
	// with an execute bit.
	ErrNotExecutable = wrapInvalid("command is not a regular executable file")
	// ErrInvalidCommand: command is neither a bare name nor a "./" path.
	ErrInvalidCommand = wrapInvalid("command is not a single bare name or ./ path")
	// ErrInvalidCwd: cwd has none of the three forms of section 7.2.1.
	ErrInvalidCwd = wrapInvalid("cwd is not ./, ${PLUGIN_ROOT} or ${PLUGIN_DATA} rooted")
	// ErrInvalidEnv: an env name is empty, holds '=' or NUL, or is one of
	// the reserved PLUGIN_ROOT and PLUGIN_DATA (section 9.2).
	ErrInvalidEnv = wrapInvalid("invalid env entry")
	// ErrInvalidURL: the URL is not absolute http(s), has user information
	// or a fragment.
	ErrInvalidURL = wrapInvalid("invalid server URL")
	// ErrInsecureURL: plain http to a host that is not loopback.
	ErrInsecureURL = wrapInvalid("http is only allowed to localhost or a loopback IP")
	// ErrInvalidHeader: a configured header is not a valid HTTP field, or
	// the same name appears twice under different casing.
	ErrInvalidHeader = wrapInvalid("invalid header")
	// ErrUnsupportedTransport: the server's type is not one this run
	// supports (section 7.2.2 item 4).
	ErrUnsupportedTransport = wrapInvalid("unsupported transport")
)

// Errors that are not about the configuration.
var (
	// ErrCrossOrigin: a redirect or a legacy SSE endpoint event pointed to
	// another origin, and following it was not allowed (section 7.2.1).
	ErrCrossOrigin = errors.New("refused to leave the configured origin")
	// ErrNotFound: a bare command name is not on the client's search path.
	ErrNotFound = errors.New("command not found on the executable search path")
	// ErrNoDataDir: a stdio server needs a PLUGIN_DATA directory and the
	// client gave none (PlanOptions.DataDir). Start reports such a server
	// as skipped; the plugin's remote servers are unaffected.
	ErrNoDataDir = errors.New("no PLUGIN_DATA directory: stdio servers need one")
	// ErrHostConfig: an overlay the host supplies (HostEnv) cannot be
	// applied, such as one naming PLUGIN_ROOT.
	ErrHostConfig = errors.New("invalid host overlay")
	// ErrExited: a ready server's process exited or its connection closed
	// by itself (see StatusExited).
	ErrExited = errors.New("server ended")
	// ErrTimeout: a server did not start or finish its handshake in time.
	ErrTimeout = errors.New("timed out")
)

// invalidError is a specific reason that also matches ErrInvalidServer.
type invalidError struct{ msg string }

func (e *invalidError) Error() string        { return e.msg }
func (e *invalidError) Is(target error) bool { return target == ErrInvalidServer }

func wrapInvalid(msg string) error { return &invalidError{msg: msg} }
