package main

import (
	"errors"
	"fmt"

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
