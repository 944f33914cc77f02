package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
	prefix := "." + filepath.Base(dir) + ".tmp-"
	defer func() { err = aboutDir(err, dir, filepath.Join(filepath.Dir(dir), prefix)) }()
	tmp, err := os.MkdirTemp(filepath.Dir(dir), prefix+"*")
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

// writeTree writes every file below root: first the directories, in byte
// order, then the files of each directory, on several CPUs when there are
// many. Creating a file costs the kernel far more than writing its bytes,
// and files of different directories are created in parallel.
func writeTree(root string, s *Snapshot) error {
	dirs, err := filesByDir(s)
	if err != nil {
		return err
	}
	top, err := openRootHandle(root)
	if err != nil {
		return err
	}
	defer top.close()
	umask := processUmask()
	if err := makeDirs(top, dirs, umask); err != nil {
		return err
	}
	if err := writeFiles(top, s, dirs, umask); err != nil {
		return err
	}
	return top.syncTree()
}

// dirFiles are the files of one directory of a snapshot.
type dirFiles struct {
	dir   string   // package path of the directory, "" for the root
	names []string // base names of its files
	paths []string // their package paths
}

// filesByDir checks every path of s and groups the files by directory, the
// directories in byte order.
func filesByDir(s *Snapshot) ([]*dirFiles, error) {
	byDir := map[string]*dirFiles{}
	var dirs []*dirFiles
	for _, p := range s.Paths() {
		if err := CheckPath(p); err != nil {
			return nil, err
		}
		dir, name := "", p
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			dir, name = p[:i], p[i+1:]
		}
		g := byDir[dir]
		if g == nil {
			g = &dirFiles{dir: dir}
			byDir[dir] = g
			dirs = append(dirs, g)
		}
		g.names = append(g.names, name)
		g.paths = append(g.paths, p)
	}
	slices.SortFunc(dirs, func(a, b *dirFiles) int { return strings.Compare(a.dir, b.dir) })
	return dirs, nil
}

// makeDirs creates the directories of dirs below top, one component at a
// time, keeping the handles along the current path open.
func makeDirs(top *dirHandle, dirs []*dirFiles, umask fs.FileMode) (err error) {
	open := []*dirHandle{top} // open[i] is the directory of depth i along cur
	var cur []string          // names of the directories along the current path
	// closeLast closes the deepest open directory, first flushing it where
	// each directory is flushed on its own.
	closeLast := func() error {
		d := open[len(open)-1]
		open = open[:len(open)-1]
		err := d.syncDir()
		d.close()
		return err
	}
	defer func() {
		for len(open) > 1 {
			if cerr := closeLast(); err == nil {
				err = cerr
			}
		}
	}()
	for _, g := range dirs {
		if g.dir == "" {
			continue
		}
		parts := strings.Split(g.dir, "/")
		common := 0
		for common < len(cur) && common < len(parts) && cur[common] == parts[common] {
			common++
		}
		for len(open) > common+1 {
			if err := closeLast(); err != nil {
				return err
			}
		}
		cur = cur[:common]
		for _, name := range parts[common:] {
			d, err := open[len(open)-1].mkdir(name, umask)
			if err != nil {
				return err
			}
			open = append(open, d)
			cur = append(cur, name)
		}
	}
	return nil
}

// parallelFiles is the number of files from which writeFiles spreads the
// directories over several writers, when directories hold enough files
// each to repay opening them again.
const parallelFiles = 256

// writeFiles creates the files of every directory of dirs, which exist.
// After a failure no other directory is started, and the error returned is
// that of the first directory, in byte order, among those that failed.
func writeFiles(top *dirHandle, s *Snapshot, dirs []*dirFiles, umask fs.FileMode) error {
	write := func(g *dirFiles) error {
		d := top
		if g.dir != "" {
			var err error
			if d, err = top.openDir(g.dir); err != nil {
				return err
			}
			defer d.close()
		}
		for i, name := range g.names {
			if err := d.create(name, s.Files[g.paths[i]], FileMode(s.Mode(g.paths[i])), umask); err != nil {
				return err
			}
		}
		return d.syncDir()
	}
	workers := min(runtime.GOMAXPROCS(0), 4)
	if n := len(s.Files); n < parallelFiles || n < 8*len(dirs) {
		workers = 1
	}
	errs := make([]error, len(dirs))
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(dirs) && !failed.Load(); i = int(next.Add(1) - 1) {
				if errs[i] = write(dirs[i]); errs[i] != nil {
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
