// Package boundedfile reads whole files that have a size limit (a key, a
// policy, a bundle) without reading more than one byte past the limit,
// whatever the file's size.
package boundedfile

import (
	"io"
	"os"

	"github.com/plugkit/plugkit/snapshot"
)

// Read reads the file at path. A file larger than limit bytes is a
// *snapshot.LimitError (matching snapshot.ErrLimit) naming limitName and
// path. Other errors are the operating system's.
func Read(path string, limit int64, limitName string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, limit, limitName, path)
}

// ReadAll is Read of a file already open, or of a member of an archive:
// it reads r to the end, or to one byte past limit, which is then a
// *snapshot.LimitError naming limitName and path.
func ReadAll(r io.Reader, limit int64, limitName, path string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &snapshot.LimitError{Limit: limitName, Value: limit, Path: path}
	}
	return b, nil
}
