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

// ErrDirName is matched by the error of CheckNewDir and WriteDir for a
// directory named by "." or ".." (after cleaning) or the root: the new
// directory replaces dir by a rename, which would leave a shell sitting in
// dir in a removed directory, and whose temporary sibling would be made
// inside dir itself. Name it from its parent instead (../demo).
var ErrDirName = errors.New("the new directory must be named from its parent, not by . or ..")

// CheckNewDir reports whether WriteDir may create dir: it must not exist,
// or be an empty directory. Callers use it to fail before costly work (a
// download, say); WriteDir checks again.
func CheckNewDir(dir string) error {
	if b := filepath.Base(filepath.Clean(dir)); b == "." || b == ".." || b == string(filepath.Separator) {
		return fmt.Errorf("%s: %w", dir, ErrDirName)
	}
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
// snapshot path can land outside it. It is a DirWriter given the files in
// byte order.
func WriteDir(dir string, s *Snapshot) error {
	w, err := CreateDir(dir)
	if err != nil {
		return err
	}
	for _, p := range s.Paths() {
		if err := w.WriteFile(p, s.Mode(p), s.Files[p]); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Commit()
}

// aboutDir restates err, when it names the temporary sibling (tmp, then
// its random suffix), as an error about dir: the user asked for dir and
// has never heard of .dir.tmp-661274721.
func aboutDir(err error, dir, tmp string) error {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return err
	}
	rest, ok := strings.CutPrefix(pe.Path, tmp)
	if !ok {
		return err
	}
	inner := ""
	if i := strings.IndexByte(rest, filepath.Separator); i >= 0 {
		inner = rest[i:]
	}
	return &fs.PathError{Op: pe.Op, Path: dir + inner, Err: pe.Err}
}

// FileMode is the mode WriteDir gives a file recorded with mode m: 0755
// when m has any execute bit, 0644 otherwise, as archives are packed.
func FileMode(m fs.FileMode) fs.FileMode {
	if m&0o111 != 0 {
		return 0o755
	}
	return 0o644
}
