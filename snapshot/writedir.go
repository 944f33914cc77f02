package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotEmpty is matched by the error of WriteDir and CheckNewDir for a
// directory that already holds something.
var ErrNotEmpty = errors.New("directory is not empty")

// CheckNewDir reports whether WriteDir may create dir: it must not exist,
// or be an empty directory. Callers use it to fail before costly work (a
// download, say); WriteDir checks again.
func CheckNewDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case len(entries) > 0:
		return fmt.Errorf("%s: %w", dir, ErrNotEmpty)
	}
	return nil
}

// WriteDir writes the snapshot as the new directory dir, atomically and
// durably: the files are written into a temporary sibling, which is
// flushed to stable storage (one syncfs on Linux; elsewhere an fsync of
// each file and directory) and then renamed to dir, and the rename is
// flushed too. On any failure the sibling is removed and dir is left as
// it was, so there is never a partial tree. dir must not exist or be
// empty.
//
// Files are written with FileMode, 0644 or 0755 as pack writes them, never
// group- or world-writable whatever the snapshot records, and whatever the
// umask; directories are 0755. Files and directories are created one path
// component at a time below the new tree, never through a link, so no
// snapshot path can land outside it.
func WriteDir(dir string, s *Snapshot) (err error) {
	if err := CheckNewDir(dir); err != nil {
		return err
	}
	dir = filepath.Clean(dir)
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := writeTree(tmp, s); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	// Rename never replaces a directory, even an empty one: remove the empty
	// dir first (Remove fails should it have been filled meanwhile).
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dir))
}

// FileMode is the mode WriteDir gives a file recorded with mode m: 0755
// when m has any execute bit, 0644 otherwise, as archives are packed.
func FileMode(m fs.FileMode) fs.FileMode {
	if m&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

// writeTree writes every file below root. Paths are taken in byte order and
// the handles of the directories along the current path are kept open, so
// each file costs one create relative to its own directory.
func writeTree(root string, s *Snapshot) error {
	top, err := openRootHandle(root)
	if err != nil {
		return err
	}
	umask := processUmask()
	open := []*dirHandle{top} // open[i] is the directory of depth i along cur
	var cur []string          // names of the directories along the current path
	defer func() {
		for _, d := range open {
			d.close()
		}
	}()
	// closeLast closes the deepest open directory, first flushing it where
	// each directory is flushed on its own.
	closeLast := func() error {
		d := open[len(open)-1]
		open = open[:len(open)-1]
		err := d.syncDir()
		d.close()
		return err
	}
	for _, p := range s.Paths() {
		if err := CheckPath(p); err != nil {
			return err
		}
		parts := strings.Split(p, "/")
		dirs := parts[:len(parts)-1]
		common := 0
		for common < len(cur) && common < len(dirs) && cur[common] == dirs[common] {
			common++
		}
		for len(open) > common+1 {
			if err := closeLast(); err != nil {
				return err
			}
		}
		cur = cur[:common]
		for _, name := range dirs[common:] {
			d, err := open[len(open)-1].mkdir(name, umask)
			if err != nil {
				return err
			}
			open = append(open, d)
			cur = append(cur, name)
		}
		if err := open[len(open)-1].create(parts[len(parts)-1], s.Files[p], FileMode(s.Mode(p)), umask); err != nil {
			return err
		}
	}
	for len(open) > 1 {
		if err := closeLast(); err != nil {
			return err
		}
	}
	return top.syncTree()
}
