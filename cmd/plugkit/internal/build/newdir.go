package build

import (
	"io/fs"

	"github.com/plugkit/plugkit/snapshot"
)

// OutDir is the new directory DIR of unpack and pull, written while the
// plugin is still being unpacked and checked (see snapshot.DirWriter).
//
// Its temporary sibling is created at the first file, so that a download
// or a refusal before any file leaves nothing to clean. An error of
// creating or writing it is reported by Commit, once the plugin is
// accepted: a refused plugin is refused as it was when nothing was written
// before the verdict, whatever the disk says.
type OutDir struct {
	path  string
	w     *snapshot.DirWriter
	err   error // of creating the writer
	bytes int64 // given to write
}

// NewOutDir is the new directory path, not created yet.
func NewOutDir(path string) *OutDir { return &OutDir{path: path} }

// create makes the writer, once.
func (d *OutDir) create() {
	if d.w == nil && d.err == nil {
		d.w, d.err = snapshot.CreateDir(d.path)
	}
}

// Write is the unpacker's OnFile.
func (d *OutDir) Write(p string, mode fs.FileMode, data []byte) error {
	if d.create(); d.err != nil {
		return nil // Commit reports it
	}
	d.bytes += int64(len(data))
	return d.w.WriteFile(p, mode, data)
}

// Commit renames the written tree into place: an empty one when no file
// came.
func (d *OutDir) Commit() error {
	if d.create(); d.err != nil {
		return d.err
	}
	return d.w.Commit()
}

// Abort removes what was written, if anything; after Commit it does
// nothing.
func (d *OutDir) Abort() {
	if d.w != nil {
		d.w.Abort()
	}
}
