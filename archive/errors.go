package archive

import (
	"errors"
	"fmt"
)

// The reasons Unpack or Pack refuses an archive or a snapshot. Every error
// they return for one of these reasons matches it with errors.Is; errors
// about one header are an *EntryError that also names the entry.
var (
	ErrSymlink      = errors.New("symbolic link")
	ErrHardLink     = errors.New("hard link")
	ErrSpecial      = errors.New("device or fifo")
	ErrType         = errors.New("unsupported entry type")
	ErrPAX          = errors.New("PAX extension header")
	ErrGNU          = errors.New("GNU extension header")
	ErrMagic        = errors.New("not a POSIX USTAR header")
	ErrChecksum     = errors.New("bad header checksum")
	ErrHeader       = errors.New("malformed header field")
	ErrPath         = errors.New("invalid path")
	ErrDuplicate    = errors.New("duplicate path")
	ErrConflict     = errors.New("path is both a file and a directory")
	ErrOutsideRoot  = errors.New("entry outside the root folder")
	ErrSize         = errors.New("size field disagrees with the data")
	ErrTruncated    = errors.New("truncated archive")
	ErrTrailingData = errors.New("nonzero data after the end of the archive")
	ErrGzip         = errors.New("invalid gzip stream")
	ErrNameTooLong  = errors.New("path does not fit the USTAR name and prefix fields")
)

// EntryError is an error about one archive entry (or, from Pack, one
// snapshot path).
type EntryError struct {
	Index int    // 0-based position of the header in the archive; -1 from Pack
	Path  string // the entry's name as recorded, which may be hostile: print it quoted
	Err   error  // one of the sentinel errors above, possibly wrapped with detail
}

func (e *EntryError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("archive: %q: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("archive entry %d %q: %v", e.Index, e.Path, e.Err)
}

// Unwrap returns the underlying error, so errors.Is sees the sentinel.
func (e *EntryError) Unwrap() error { return e.Err }

// detail wraps a sentinel with a few more words.
func detail(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))
}
