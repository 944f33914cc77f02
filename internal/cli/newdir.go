package cli

import (
	"io/fs"

	"github.com/plugkit/plugkit/snapshot"
)

// newDir is the new directory DIR of unpack and pull, written while the
// plugin is still being unpacked and checked (see snapshot.DirWriter).
//
// Its temporary sibling is created at the first file, so that a download
// or a refusal before any file leaves nothing to clean. An error of
// creating or writing it is reported by commit, once the plugin is
// accepted: a refused plugin is refused as it was when nothing was written
// before the verdict, whatever the disk says.
type newDir struct {
	path  string
	w     *snapshot.DirWriter
	err   error // of creating the writer
	bytes int64 // given to write
}

// create makes the writer, once.
func (d *newDir) create() {
	if d.w == nil && d.err == nil {
		d.w, d.err = snapshot.CreateDir(d.path)
	}
}

// write is the unpacker's OnFile.
func (d *newDir) write(p string, mode fs.FileMode, data []byte) error {
	if d.create(); d.err != nil {
		return nil // commit reports it
	}
	d.bytes += int64(len(data))
	return d.w.WriteFile(p, mode, data)
}

// commit renames the written tree into place: an empty one when no file
// came.
func (d *newDir) commit() error {
	if d.create(); d.err != nil {
		return d.err
	}
	return d.w.Commit()
}

// abort removes what was written, if anything; after commit it does
// nothing.
func (d *newDir) abort() {
	if d.w != nil {
		d.w.Abort()
	}
}
