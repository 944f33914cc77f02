package archive

import (
	"github.com/plugkit/plugkit/snapshot"
)

// Default limits of Unpack.
const (
	DefaultMaxArchiveBytes      = 32 << 20   // compressed archive
	DefaultMaxUncompressedBytes = 80_000_000 // decompressed tar stream, headers and padding included
	DefaultMaxTotalBytes        = 64 << 20   // file bytes in total
	DefaultMaxFileBytes         = 16 << 20   // bytes of one file
	DefaultMaxFiles             = 10_000     // regular files
	DefaultMaxEntries           = 20_000     // headers of any type
	DefaultMaxDepth             = 64         // directory levels of a path
)

// Limits bound what Unpack accepts. A zero (or negative) field takes its
// default.
type Limits struct {
	MaxArchiveBytes      int64 // default 32 MiB
	MaxUncompressedBytes int64 // default 80,000,000
	MaxTotalBytes        int64 // default 64 MiB
	MaxFileBytes         int64 // default 16 MiB
	MaxFiles             int   // default 10,000
	MaxEntries           int   // default 20,000
	MaxDepth             int   // default 64: "a/b/file" has 2 levels, directory "a/b" has 2
}

func (l Limits) withDefaults() Limits {
	def := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxArchiveBytes, DefaultMaxArchiveBytes)
	def(&l.MaxUncompressedBytes, DefaultMaxUncompressedBytes)
	def(&l.MaxTotalBytes, DefaultMaxTotalBytes)
	def(&l.MaxFileBytes, DefaultMaxFileBytes)
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	return l
}

// ErrLimit is matched (with errors.Is) by every *LimitError. It is the same
// value as snapshot.ErrLimit, so one check covers directories and archives.
var ErrLimit = snapshot.ErrLimit

// LimitError reports that Unpack stopped at a named limit (a field of
// Limits). It is snapshot's type, so that a caller reading a plugin from a
// directory or an archive handles one error.
type LimitError = snapshot.LimitError
