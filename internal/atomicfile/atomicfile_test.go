package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if string(b) != "new" || fi.Mode().Perm() != 0o644 {
		t.Fatalf("%q %v", b, fi.Mode())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("leftovers: %v", ents)
	}
}

func TestAbortLeavesTargetUntouched(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out")
	os.WriteFile(p, []byte("old"), 0o644)
	f, err := Create(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half"))
	f.Abort()
	f.Abort() // twice is harmless
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatalf("target changed: %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("leftovers: %v", ents)
	}
}

func TestCreateInMissingDirectory(t *testing.T) {
	err := Write(filepath.Join(t.TempDir(), "no", "such", "out"), nil, 0o644)
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v", err)
	}
}

// TestErrorsNameTheTarget: errors name the file the caller asked for,
// never the temporary sibling.
func TestErrorsNameTheTarget(t *testing.T) {
	target := filepath.Join(t.TempDir(), "no", "such", "out.tar.gz")
	err := Write(target, nil, 0o644)
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != target || strings.Contains(err.Error(), ".tmp-") {
		t.Fatalf("err = %v, want a PathError about %s", err, target)
	}
	// A directory where the file should go: the rename fails.
	dir := t.TempDir()
	target = filepath.Join(dir, "taken")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err = Write(target, []byte("b"), 0o644)
	if !errors.As(err, &pe) || pe.Path != target || strings.Contains(err.Error(), ".tmp-") {
		t.Fatalf("err = %v, want a PathError about %s", err, target)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("leftovers: %v", ents)
	}
}
