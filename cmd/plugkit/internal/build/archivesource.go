package build

import (
	"os"

	"github.com/plugkit/plugkit/archive"
)

// fileDigest is the digest and size of a file, read as a stream.
func fileDigest(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	return archive.DigestReader(f)
}
