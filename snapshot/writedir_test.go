//go:build unix

package snapshot_test

import (
	"errors"
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
	}, map[string]fs.FileMode{"bin/run": 0o755, "z": 0o600})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	if err := snapshot.WriteDir(dir, s); err != nil {
		t.Fatal(err)
	}
	back, err := snapshot.ReadDir(dir, snapshot.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(s) {
		t.Errorf("read back %v %v, want %v %v", back.Files, back.Modes, s.Files, s.Modes)
	}
	// An existing empty directory is fine too.
	empty := t.TempDir()
	if err := snapshot.WriteDir(empty, s); err != nil {
		t.Errorf("into an empty directory: %v", err)
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
