//go:build unix

package snapshot_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/plugkit/plugkit/snapshot"
)

func TestWriteDirRoundTrip(t *testing.T) {
	old := syscall.Umask(0o077) // modes must not depend on the umask
	defer syscall.Umask(old)
	s, err := snapshot.New(map[string][]byte{
		"plugin.json": []byte("{}"), "bin/run": []byte("#!/bin/sh\n"), "a/b/c/d.txt": []byte("deep"),
		"a/b.txt": nil, "a-b/x": []byte("x"), "z": []byte("z"),
	}, map[string]fs.FileMode{"bin/run": 0o755, "z": 0o644})
	if err != nil {
		t.Fatal(err)
	}
	writeAndReadBack(t, s)
	// An existing empty directory is fine too.
	empty := t.TempDir()
	if err := snapshot.WriteDir(empty, s); err != nil {
		t.Errorf("into an empty directory: %v", err)
	}
}

// writeAndReadBack writes s into a new directory and checks that reading
// it back gives s again.
func writeAndReadBack(t *testing.T, s *snapshot.Snapshot) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "out")
	if err := snapshot.WriteDir(dir, s); err != nil {
		t.Fatal(err)
	}
	back, err := snapshot.ReadDir(dir, snapshot.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(s) {
		t.Errorf("read back %d files, want %d equal ones: %v %v", len(back.Files), len(s.Files), back.Modes, s.Modes)
	}
}

// TestWriteDirManyFiles writes a tree large enough for several writers,
// reads it back, and checks that a failure there too leaves nothing.
func TestWriteDirManyFiles(t *testing.T) {
	files := map[string][]byte{}
	modes := map[string]fs.FileMode{}
	for i := range 2000 {
		p := fmt.Sprintf("d%02d/sub/f%04d", i%20, i)
		if i%7 == 0 {
			p = fmt.Sprintf("top%04d", i)
			modes[p] = 0o755
		}
		files[p] = []byte(p)
	}
	s, err := snapshot.New(files, modes)
	if err != nil {
		t.Fatal(err)
	}
	writeAndReadBack(t, s)
	files["d05/sub"] = []byte("a file where a directory is")
	bad := &snapshot.Snapshot{Files: files}
	parent := t.TempDir()
	if err := snapshot.WriteDir(filepath.Join(parent, "bad"), bad); err == nil {
		t.Fatal("a file and a directory at one path were written")
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

// TestWriteDirModes: entries recorded 0777 or 0666
// (an archive may say anything) came out group- and world-writable, even
// under umask 077, so any local user could replace an executable that
// plugkit mcp later runs. Files are written 0644 or 0755, as pack writes
// them, whatever the snapshot records and whatever the umask.
func TestWriteDirModes(t *testing.T) {
	modes := map[string]fs.FileMode{
		"rwx-all": 0o777, "rw-all": 0o666, "owner-only": 0o600, "owner-x": 0o700,
		"group-x": 0o610, "none": 0, "plain": 0o644, "exec": 0o755, "setuid": 0o4755,
	}
	want := map[string]fs.FileMode{
		"rwx-all": 0o755, "rw-all": 0o644, "owner-only": 0o644, "owner-x": 0o755,
		"group-x": 0o755, "none": 0o644, "plain": 0o644, "exec": 0o755, "setuid": 0o755,
	}
	files := map[string][]byte{}
	for p := range modes {
		files["d/"+p] = []byte(p)
	}
	sub := map[string]fs.FileMode{}
	for p, m := range modes {
		sub["d/"+p] = m
	}
	s, err := snapshot.New(files, sub)
	if err != nil {
		t.Fatal(err)
	}
	for _, umask := range []int{0, 0o022, 0o077} {
		old := syscall.Umask(umask)
		dir := filepath.Join(t.TempDir(), "out")
		err := snapshot.WriteDir(dir, s)
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		for p, m := range want {
			fi, err := os.Lstat(filepath.Join(dir, "d", p))
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != m || fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 {
				t.Errorf("umask %03o: %s recorded %04o written %v, want %04o", umask, p, modes[p], fi.Mode(), m)
			}
		}
		for _, d := range []string{".", "d"} {
			if fi, err := os.Stat(filepath.Join(dir, d)); err != nil || fi.Mode().Perm() != 0o755 {
				t.Errorf("umask %03o: directory %s: %v %v", umask, d, fi.Mode(), err)
			}
		}
	}
}

func TestWriteDirRefusesAndLeavesNothing(t *testing.T) {
	parent := t.TempDir()
	full := filepath.Join(parent, "full")
	if err := os.MkdirAll(filepath.Join(full, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	good, _ := snapshot.FromFiles(map[string][]byte{"a": nil})
	if err := snapshot.WriteDir(full, good); !errors.Is(err, snapshot.ErrNotEmpty) {
		t.Errorf("non-empty: %v", err)
	}
	if err := snapshot.CheckNewDir(full); !errors.Is(err, snapshot.ErrNotEmpty) {
		t.Errorf("CheckNewDir: %v", err)
	}
	for name, bad := range map[string]*snapshot.Snapshot{
		"traversal": {Files: map[string][]byte{"a": nil, "../escape": []byte("x")}},
		"conflict":  {Files: map[string][]byte{"a": nil, "a/b": nil}},
		"absolute":  {Files: map[string][]byte{"/etc/x": nil}},
	} {
		dst := filepath.Join(parent, name)
		if err := snapshot.WriteDir(dst, bad); err == nil {
			t.Errorf("%s: written", name)
		}
		if _, err := os.Stat(dst); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %s exists after a failure", name, dst)
		}
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 {
		t.Errorf("temporary siblings left behind: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(parent, "escape")); err == nil {
		t.Error("a path escaped the new tree")
	}
}

// TestWriteDirRefusesDotNames: "." and ".." would be replaced by the
// rename (a shell sitting in "." would be left in a removed directory) and
// the temporary sibling would be made inside them; they are refused before
// anything is written, as named, however they are spelled.
func TestWriteDirRefusesDotNames(t *testing.T) {
	s, _ := snapshot.FromFiles(map[string][]byte{"a": nil})
	before, _ := os.ReadDir(".")
	for _, dir := range []string{".", "..", "./", "x/..", "/"} {
		if err := snapshot.CheckNewDir(dir); !errors.Is(err, snapshot.ErrDirName) {
			t.Errorf("CheckNewDir(%q) = %v, want ErrDirName", dir, err)
		}
		if err := snapshot.WriteDir(dir, s); !errors.Is(err, snapshot.ErrDirName) {
			t.Errorf("WriteDir(%q) = %v, want ErrDirName", dir, err)
		}
	}
	if after, _ := os.ReadDir("."); len(after) != len(before) {
		t.Errorf("the package directory changed: %d entries, was %d", len(after), len(before))
	}
	// A path that only passes through ".." names a real directory.
	parent := t.TempDir()
	if err := snapshot.CheckNewDir(filepath.Join(parent, "new") + "/../new2"); err != nil {
		t.Errorf("a name after ..: %v", err)
	}
}
