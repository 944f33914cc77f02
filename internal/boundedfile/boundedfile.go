// Package boundedfile reads whole files that have a size limit (a key, a
// policy, a bundle) without reading more than one byte past the limit,
// whatever the file's size.
package boundedfile

import (
	"bytes"
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
	// One buffer of the file's size, and room to see its end, is read into
	// at once: io.ReadAll reads into chunks growing by half and copies them
	// into a final slice, twice the memory, which for plugkit unpack's
	// 22 MB archive took 42-154 ms against 16-20 ms (tmpfs, 6 alternating
	// runs). A size that is wrong (a file growing meanwhile, a /proc file
	// that says 0) costs only growing the buffer.
	size := 0
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = int(min(fi.Size(), limit)) + 1
	}
	return readAll(f, size, limit, limitName, path)
}

// ReadAll is Read of a file already open, or of a member of an archive:
// it reads r to the end, or to one byte past limit, which is then a
// *snapshot.LimitError naming limitName and path. size is what r is
// expected to hold (0 when unknown): the buffer starts at that size, as
// Read's starts at the file's, so that it is not grown by doubling.
func ReadAll(r io.Reader, size, limit int64, limitName, path string) ([]byte, error) {
	return readAll(r, int(min(max(size, 0), limit))+1, limit, limitName, path)
}

// readAll is ReadAll into a buffer of size bytes at first.
func readAll(r io.Reader, size int, limit int64, limitName, path string) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	_, err := buf.ReadFrom(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	b := buf.Bytes()
	if int64(len(b)) > limit {
		return nil, &snapshot.LimitError{Limit: limitName, Value: limit, Path: path}
	}
	return b, nil
}
