//go:build !unix

package oci

import (
	"io"
	"os"
)

// openBlob opens the regular file at path for reading.
func openBlob(path string) (io.ReadCloser, error) { return os.Open(path) }
