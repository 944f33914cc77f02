package install

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/snapshot"
)

// putTree stores snap as the tree of digest, unless an intact tree is
// there already; it reports whether it wrote one. The tree is written
// into a temporary sibling, made read-only, its .files list written, and
// only then renamed into place: a tree under its digest is always
// complete. A damaged tree (check found it modified) is replaced.
func (w *writer) putTree(snap *snapshot.Snapshot, digest string) (bool, error) {
	h := w.h
	final := h.TreePath(digest)
	if _, err := os.Lstat(final); err == nil {
		if problems, err := h.verifyDigest(digest); err == nil && len(problems) == 0 {
			return false, nil
		}
		if err := w.dropTree(digest); err != nil {
			return false, err
		}
	}
	store := filepath.Join(h.dir, storeDir)
	if err := os.MkdirAll(store, 0o755); err != nil {
		return false, err
	}
	// The temporary tree shares the final tree's parent: renaming a
	// read-only directory into another parent is refused (EACCES), since
	// its ".." would change.
	tmp := filepath.Join(store, ".new-"+strings.TrimPrefix(digest, "sha256:")+"-"+randomSuffix())
	if err := snapshot.WriteDir(tmp, snap); err != nil {
		return false, err
	}
	crashPoint("tree-written")
	if err := makeReadOnly(tmp, snap); err != nil {
		return false, err
	}
	if err := writeFileAtomic(h.filesPath(digest), newFileList(snap, digest).Encode(), 0o444); err != nil {
		return false, err
	}
	crashPoint("files-written")
	if err := os.Rename(tmp, final); err != nil {
		return false, err
	}
	crashPoint("tree-renamed")
	return true, nil
}

// makeReadOnly gives every file of the tree at dir its store mode (0444,
// or 0555 when executable) and every directory 0555.
func makeReadOnly(dir string, snap *snapshot.Snapshot) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(p, modeDir)
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		return os.Chmod(p, storeMode(snap.Mode(filepath.ToSlash(rel))))
	})
}

// dropTree removes the tree of digest and its list. The tree is first
// renamed to a temporary name, so that a reader sees it whole or not at
// all, and a crash leaves only a leftover the next writer removes.
func (w *writer) dropTree(digest string) error {
	h := w.h
	trash := filepath.Join(h.dir, storeDir, ".trash-"+strings.TrimPrefix(digest, "sha256:")+"-"+randomSuffix())
	if err := os.Rename(h.TreePath(digest), trash); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	crashPoint("tree-trashed")
	if err := os.Remove(h.filesPath(digest)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return removeTree(trash)
}

// removeTree removes dir and everything below it, making read-only
// directories writable first so that their entries can go.
func removeTree(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// gcTrees removes every tree and list of the store that the lock does not
// name, and the leftovers of interrupted writers (names starting with
// "."). Entries it does not recognise are left alone.
func (w *writer) gcTrees() error {
	store := filepath.Join(w.h.dir, storeDir)
	entries, err := os.ReadDir(store)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	keep := make(map[string]bool, len(w.lock.Plugins))
	for _, e := range w.lock.Plugins {
		keep[strings.TrimPrefix(e.ArchiveDigest, "sha256:")] = true
	}
	for _, e := range entries {
		name := e.Name()
		hexName := strings.TrimSuffix(name, ".files")
		switch {
		case strings.HasPrefix(name, "."):
			err = removeTree(filepath.Join(store, name))
		case keep[hexName] || !isDigestHex(hexName):
			continue
		case name == hexName:
			err = w.dropTree("sha256:" + hexName)
		default:
			// A list whose tree is gone.
			err = os.Remove(filepath.Join(store, name))
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

func isDigestHex(s string) bool {
	_, err := archive.ParseDigest("sha256:" + s)
	return err == nil
}

// verifyDigest compares the stored tree of digest with its list. A tree
// that a writer removed or replaced while it was read is ErrGone, not a
// list of problems: what was read is no longer what the home holds.
func (h *Home) verifyDigest(digest string) ([]Problem, error) {
	tree := h.TreePath(digest)
	before, err := os.Lstat(tree)
	if errors.Is(err, fs.ErrNotExist) {
		return []Problem{{Path: ".", Kind: "missing", Detail: "the whole tree"}}, nil
	}
	if err != nil {
		return nil, err
	}
	list, err := h.readFileList(digest)
	var problems []Problem
	if err == nil {
		problems, err = verifyTree(tree, list)
	}
	if err != nil || len(problems) > 0 {
		if now, serr := os.Lstat(tree); serr != nil || !os.SameFile(before, now) {
			return nil, fmt.Errorf("%s: %w", tree, ErrGone)
		}
	}
	return problems, err
}

// randomSuffix names temporary files apart.
func randomSuffix() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}
