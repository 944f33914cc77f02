package filelock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTryLock: a second open file of a locked file is refused with
// ErrLocked and learns who holds it; once the holder unlocks, or closes
// the file, the lock can be taken again.
func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	if h := Holder(a); h != "" {
		t.Errorf("holder of a new file: %q", h)
	}
	if err := TryLock(a); err != nil {
		t.Fatal(err)
	}
	if err := Stamp(a); err != nil {
		t.Fatal(err)
	}
	if err := TryLock(b); !errors.Is(err, ErrLocked) {
		t.Fatalf("second TryLock: %v, want ErrLocked", err)
	}
	if h, want := Holder(b), fmt.Sprintf("pid %d since ", os.Getpid()); !strings.HasPrefix(h, want) {
		t.Errorf("holder %q, want %q…", h, want)
	}
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}
	if err := TryLock(b); err != nil {
		t.Fatalf("after Unlock: %v", err)
	}
	b.Close()
	if err := TryLock(a); err != nil {
		t.Fatalf("after the holder closed its file: %v", err)
	}
}

// TestHolderIsSafe: what a holder recorded is printed with its control
// characters escaped, since anyone who can write the file chooses it.
func TestHolderIsSafe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	if err := os.WriteFile(path, []byte("pid 1\x1b[2J\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if h := Holder(f); h != `pid 1\x1b[2J` {
		t.Errorf("holder %q", h)
	}
}
