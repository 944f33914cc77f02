package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/snapshot"
)

// errBadArchive marks an archive file that archive.Unpack refused: the
// input is invalid (exit 1), not unreadable (exit 2).
var errBadArchive = errors.New("invalid archive")

// readArchiveFile unpacks a plugin archive in memory. It reads at most one
// byte past the archive limit, so a huge file is refused without being
// read whole.
func readArchiveFile(path string) (*snapshot.Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, archive.DefaultMaxArchiveBytes+1))
	if err != nil {
		return nil, err
	}
	s, err := archive.Unpack(b, archive.UnpackOptions{})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errBadArchive, path, err)
	}
	return s, nil
}
