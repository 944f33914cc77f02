package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// pair starts writing new contents of a and b, whose old contents are on
// disk.
func pair(t *testing.T) (dir string, a, b *File) {
	t.Helper()
	dir = t.TempDir()
	for _, name := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("old "+name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if a, err = Create(filepath.Join(dir, "a"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err = Create(filepath.Join(dir, "b"), 0o644); err != nil {
		t.Fatal(err)
	}
	a.Write([]byte("new a"))
	b.Write([]byte("new b"))
	return dir, a, b
}

// contents reads every entry of dir; a directory reads as "dir".
func contents(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range ents {
		if e.IsDir() {
			m[e.Name()] = "dir"
			continue
		}
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		m[e.Name()] = string(b)
	}
	return m
}

func TestCommitAllReplacesTogether(t *testing.T) {
	dir, a, b := pair(t)
	if err := CommitAll(a, b); err != nil {
		t.Fatal(err)
	}
	if got := contents(t, dir); len(got) != 2 || got["a"] != "new a" || got["b"] != "new b" {
		t.Fatalf("%v", got)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "a")); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
}

// TestCommitAllFailureLeavesEveryTarget: when the second file cannot be
// finished (here its descriptor is gone, as after an I/O error), the first
// target, which a file-by-file commit would already have replaced, is as
// it was, and no temporary file is left.
func TestCommitAllFailureLeavesEveryTarget(t *testing.T) {
	dir, a, b := pair(t)
	b.file.Close()
	err := CommitAll(a, b)
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != filepath.Join(dir, "b") {
		t.Fatalf("err = %v, want a PathError about b", err)
	}
	if got := contents(t, dir); len(got) != 2 || got["a"] != "old a" || got["b"] != "old b" {
		t.Fatalf("after a failed CommitAll: %v", got)
	}
}

// A directory where the second file goes is found before any rename.
func TestCommitAllDirectoryInTheWay(t *testing.T) {
	dir, a, b := pair(t)
	os.Remove(filepath.Join(dir, "b"))
	os.Mkdir(filepath.Join(dir, "b"), 0o755)
	if err := CommitAll(a, b); !errors.Is(err, syscall.EISDIR) {
		t.Fatalf("err = %v, want EISDIR", err)
	}
	if got := contents(t, dir); len(got) != 2 || got["a"] != "old a" || got["b"] != "dir" {
		t.Fatalf("after a refused CommitAll: %v", got)
	}
}

// TestCopyGoesThroughWrite: io.Copy into a File (a layout writer copies
// every blob so) goes through Write, so the bytes start their writeback as
// they come and a failure names the target. Before File stopped embedding
// *os.File, io.Copy took the file's own ReadFrom: nothing was counted and
// the error named .out.tmp-*.
func TestCopyGoesThroughWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out")
	f, err := Create(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	// A reader that is no io.WriterTo, as a layout writer's verifying reader.
	n, err := io.Copy(f, io.LimitReader(bytes.NewReader(make([]byte, 3*writeBehind+1)), 1<<30))
	if err != nil || n != 3*writeBehind+1 {
		t.Fatalf("copy: %d, %v", n, err)
	}
	if f.written != n || f.flushed < n-writeBehind {
		t.Errorf("written %d, writeback started for %d: want %d, and all but the last %d", f.written, f.flushed, n, writeBehind)
	}

	f.file.Close() // as after an I/O error
	_, err = io.Copy(f, io.LimitReader(strings.NewReader("more"), 4))
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != p {
		t.Errorf("copy after close: %v, want a PathError about %s", err, p)
	}
}
