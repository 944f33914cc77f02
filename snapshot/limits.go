package snapshot

import (
	"errors"
	"fmt"
)

// Default limits for reading a plugin directory.
const (
	DefaultMaxFiles      = 10_000
	DefaultMaxEntries    = 20_000
	DefaultMaxFileBytes  = 16 << 20
	DefaultMaxTotalBytes = 64 << 20
	DefaultMaxDepth      = 64
)

// Limits bound what ReadDir reads. A zero field takes its default.
type Limits struct {
	MaxFiles int // files kept (default 10,000)
	// MaxEntries bounds the directory entries listed, of any type,
	// counting each time a directory is listed: a directory reached
	// through several links counts once for each (default 20,000, as many
	// as an archive may hold).
	MaxEntries    int
	MaxFileBytes  int64 // bytes of one file (default 16 MiB)
	MaxTotalBytes int64 // bytes of all files together (default 64 MiB)
	MaxDepth      int   // directory levels below the root (default 64)
}

func (l Limits) withDefaults() Limits {
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	return l
}

// ErrLimit is matched (with errors.Is) by every *LimitError.
var ErrLimit = errors.New("limit exceeded")

// LimitError reports that reading stopped at a named limit.
type LimitError struct {
	Limit string // the Limits field: "MaxFiles", "MaxEntries", "MaxFileBytes", "MaxTotalBytes" or "MaxDepth"
	Value int64  // the limit in force
	Path  string // the package path that crossed it, when there is one
}

func (e *LimitError) Error() string {
	if e.Path != "" {
		return fmt.Sprintf("%s: limit %s (%d) exceeded", e.Path, e.Limit, e.Value)
	}
	return fmt.Sprintf("limit %s (%d) exceeded", e.Limit, e.Value)
}

// Is makes errors.Is(err, ErrLimit) true for every LimitError.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }
