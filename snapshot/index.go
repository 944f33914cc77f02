package snapshot

import (
	"sort"
	"strings"
)

// Kind tells what a package path is in the snapshot.
type Kind int

const (
	// Absent means no file is at the path or below it.
	Absent Kind = iota
	// File means a regular file is at the path.
	File
	// Dir means the path is a directory: some file lies below it.
	Dir
)

// Index answers questions about the directories a snapshot's paths imply.
// It sorts the paths once; each question is then a binary search, because
// in byte order everything below "d/" stands together.
type Index struct {
	isFile func(p string) bool
	paths  []string
}

// Index builds an index of the snapshot as it is now; it does not follow
// later changes to Files.
func (s *Snapshot) Index() *Index {
	return &Index{isFile: func(p string) bool { _, ok := s.Files[p]; return ok }, paths: s.Paths()}
}

// below returns the position of the first path under dir ("" is the root).
func (ix *Index) below(dir string) (int, string) {
	if dir == "" {
		return 0, ""
	}
	prefix := dir + "/"
	return sort.SearchStrings(ix.paths, prefix), prefix
}

// Kind reports whether p is a file, a directory or absent.
func (ix *Index) Kind(p string) Kind {
	if ix.isFile(p) {
		return File
	}
	i, prefix := ix.below(p)
	if i < len(ix.paths) && strings.HasPrefix(ix.paths[i], prefix) {
		return Dir
	}
	return Absent
}

// Children returns the names of the files and directories immediately
// inside dir ("" for the root), sorted by bytes.
func (ix *Index) Children(dir string) []string {
	var names []string
	i, prefix := ix.below(dir)
	for _, p := range ix.paths[i:] {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			break
		}
		name, _, _ := strings.Cut(rest, "/")
		// The paths below one child directory stand together, so a
		// repeat is always the previous name.
		if len(names) == 0 || names[len(names)-1] != name {
			names = append(names, name)
		}
	}
	// "a-b" sorts before "a/x" but the name "a" before "a-b": sort names.
	sort.Strings(names)
	return names
}
