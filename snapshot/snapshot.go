// Package snapshot holds a plugin package as data: package-relative paths
// mapped to bytes and to permission bits.
//
// Every way a plugin arrives — a directory, an archive, a registry download —
// becomes a Snapshot first, so that exactly one validator
// (agentplugin.Load) judges it. A Snapshot never refers back to the
// filesystem: once built, it can be validated, packed or compared without
// any further I/O.
//
// Directories are implied by the paths of the files below them. An empty
// directory is therefore indistinguishable from an absent one, which keeps a
// directory and its archive (where empty directories are dropped) giving the
// same verdict.
//
// Packing is the one exception to holding every byte: a Partial
// (ReadPartial) holds the bytes of only the files the caller names and
// streams the others from the directory, still open, when they are
// packed. It is a type of its own, so that it is never taken for a whole
// Snapshot.
package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// ErrInvalidPath is matched (with errors.Is) by every error about a path
// that is not a clean package-relative path.
var ErrInvalidPath = errors.New("invalid package path")

// DefaultMode is the permission of a file whose mode is not recorded.
const DefaultMode fs.FileMode = 0o644

// Snapshot is a plugin package as data.
//
// The zero value is an empty package. Files and Modes are keyed by
// package-relative, '/'-separated, clean paths (see CheckPath). Modes holds
// permission bits only; a file absent from Modes has DefaultMode.
// Omitted lists what a directory reader saw but did not read, so that the
// loader can apply the specification's failure boundaries to it.
type Snapshot struct {
	Files   map[string][]byte
	Modes   map[string]fs.FileMode
	Omitted []Omission
}

// FromFiles builds a snapshot from a map of paths to bytes, with every file
// at DefaultMode. Each path is checked with CheckPath, and a path that is
// both a file and the parent directory of another file is refused.
func FromFiles(files map[string][]byte) (*Snapshot, error) {
	return New(files, nil)
}

// New builds a snapshot from files and their modes. Modes may be nil or
// partial; only permission bits (0o777) are kept, never setuid, setgid or
// sticky. A mode for a path that is not a file is an error.
func New(files map[string][]byte, modes map[string]fs.FileMode) (*Snapshot, error) {
	s := &Snapshot{Files: make(map[string][]byte, len(files)), Modes: make(map[string]fs.FileMode, len(files))}
	for p, b := range files {
		if err := CheckPath(p); err != nil {
			return nil, err
		}
		s.Files[p] = b
		s.Modes[p] = DefaultMode
	}
	for p, m := range modes {
		if _, ok := s.Files[p]; !ok {
			return nil, fmt.Errorf("%w: %q has a mode but no file", ErrInvalidPath, p)
		}
		s.Modes[p] = m.Perm()
	}
	if err := checkConflicts(s.Paths()); err != nil {
		return nil, err
	}
	return s, nil
}

// checkConflicts reports a path that is both a file and a directory.
// sorted must be sorted by bytes; then a directory's children follow it
// directly after the entries that sort between "p" and "p/".
func checkConflicts(sorted []string) error {
	for i, p := range sorted {
		prefix := p + "/"
		for _, q := range sorted[i+1:] {
			if strings.HasPrefix(q, prefix) {
				return fmt.Errorf("%w: %q is both a file and a directory", ErrInvalidPath, p)
			}
			// Paths between p and p+"/" start with p followed by a byte
			// below '/'; once past them, no child of p can follow.
			if !strings.HasPrefix(q, p) || q[len(p)] > '/' {
				break
			}
		}
	}
	return nil
}

// CheckPath reports whether p is a clean package-relative path: not empty,
// '/'-separated, not absolute, without empty, "." or ".." segments, and
// without backslashes or NUL bytes. The error wraps ErrInvalidPath.
func CheckPath(p string) error {
	bad := func(why string) error { return fmt.Errorf("%w: %q: %s", ErrInvalidPath, p, why) }
	switch {
	case p == "":
		return bad("empty")
	case strings.HasPrefix(p, "/"):
		return bad("absolute")
	case strings.ContainsRune(p, 0):
		return bad("contains NUL")
	case strings.ContainsRune(p, '\\'):
		return bad("contains a backslash")
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch seg {
		case "":
			return bad("empty segment")
		case ".", "..":
			return bad("contains " + seg)
		}
	}
	return nil
}

// Paths returns the file paths in byte order.
func (s *Snapshot) Paths() []string {
	ps := make([]string, 0, len(s.Files))
	for p := range s.Files {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

// Mode returns the permission bits of the file at p, DefaultMode when none
// is recorded.
func (s *Snapshot) Mode(p string) fs.FileMode {
	if m, ok := s.Modes[p]; ok {
		return m.Perm()
	}
	return DefaultMode
}

// Size returns the total number of file bytes.
func (s *Snapshot) Size() int64 {
	var n int64
	for _, b := range s.Files {
		n += int64(len(b))
	}
	return n
}

// Equal reports whether two snapshots hold the same files with the same
// bytes and modes. Omitted entries are not compared.
func (s *Snapshot) Equal(t *Snapshot) bool {
	if len(s.Files) != len(t.Files) {
		return false
	}
	for p, b := range s.Files {
		c, ok := t.Files[p]
		if !ok || string(b) != string(c) || s.Mode(p) != t.Mode(p) {
			return false
		}
	}
	return true
}
