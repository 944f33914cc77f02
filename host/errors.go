package host

import "errors"

// Errors of the host, for errors.Is.
var (
	// ErrNotFound: no skill, skill file, tool, prompt, resource or server
	// by that name.
	ErrNotFound = errors.New("not found")
	// ErrDuplicate: two plugins of one host have the same name.
	ErrDuplicate = errors.New("two plugins have the same name")
	// ErrUnavailable: the server a request needs is skipped, failed, or
	// waiting before its next restart; the error says which and why.
	ErrUnavailable = errors.New("server unavailable")
	// ErrListLimit: a server's list answer exceeded Limits.MaxPages or
	// Limits.MaxItems.
	ErrListLimit = errors.New("list limit exceeded")
	// ErrClosed: the host has been closed.
	ErrClosed = errors.New("host closed")
	// ErrEscape: a skill resource path leaves the skill's directory.
	ErrEscape = errors.New("path escapes the skill directory")
)
