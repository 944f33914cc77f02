//go:build !unix

package oci

import (
	"fmt"
	"io"
	"os"
)

// openBlob opens the regular file at path (of size bytes when it was
// sized: the unix version's hint) for reading.
func openBlob(path string, _ int64) (io.ReadCloser, error) { return os.Open(path) }

// regularSize is the size of the regular file at path (followed if a
// symbolic link), named name in errors; anything else is refused.
func regularSize(path, name string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("%s: not a regular file", name)
	}
	return fi.Size(), nil
}
