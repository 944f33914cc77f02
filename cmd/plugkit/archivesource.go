package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/snapshot"
)

// errBadArchive marks an archive file that archive.Unpack refused: the
// input is invalid (exit 1), not unreadable (exit 2).
var errBadArchive = errors.New("invalid archive")

// readArchiveFile unpacks a plugin archive file in memory.
func readArchiveFile(path string) (*snapshot.Snapshot, error) {
	b, err := readArchiveBytes(path)
	if err != nil {
		return nil, err
	}
	s, err := archive.Unpack(b, archive.UnpackOptions{})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errBadArchive, path, err)
	}
	return s, nil
}

// fileDigest is the digest and size of a file, read as a stream.
func fileDigest(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	return archive.DigestReader(f)
}
