package boundedfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/snapshot"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	for limit, ok := range map[int64]bool{5: true, 6: true, 4: false, 0: false} {
		b, err := Read(p, limit, "MaxThing")
		if ok && (err != nil || string(b) != "12345") {
			t.Errorf("limit %d: %q %v", limit, b, err)
		}
		if !ok && (!errors.Is(err, snapshot.ErrLimit) || !strings.Contains(err.Error(), "MaxThing") || !strings.Contains(err.Error(), p)) {
			t.Errorf("limit %d: %v, want a LimitError naming MaxThing and the file", limit, err)
		}
	}
	if _, err := Read(filepath.Join(dir, "absent"), 10, "MaxThing"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent: %v", err)
	}
}

// A file whose size says less than it holds (a /proc file says 0) is read
// whole all the same, and still held to the limit.
func TestReadFileLargerThanItsSize(t *testing.T) {
	const proc = "/proc/self/status"
	if fi, err := os.Stat(proc); err != nil || fi.Size() != 0 {
		t.Skipf("%s is not a file whose size says 0 here (%v)", proc, err)
	}
	b, err := Read(proc, 1<<20, "MaxThing")
	if err != nil || !strings.Contains(string(b), "\nUmask:") {
		t.Fatalf("read %d bytes (%v), want the whole status", len(b), err)
	}
	if _, err := Read(proc, int64(len(b)/2), "MaxThing"); !errors.Is(err, snapshot.ErrLimit) {
		t.Errorf("past the limit: %v", err)
	}
}

// ReadAll bounds a reader as Read bounds a file, naming the path it is
// given.
func TestReadAll(t *testing.T) {
	b, err := ReadAll(strings.NewReader("12345"), 5, "MaxThing", "member")
	if err != nil || string(b) != "12345" {
		t.Errorf("at the limit: %q %v", b, err)
	}
	_, err = ReadAll(strings.NewReader("123456"), 5, "MaxThing", "member")
	if !errors.Is(err, snapshot.ErrLimit) || !strings.Contains(err.Error(), "member") {
		t.Errorf("past the limit: %v", err)
	}
}

func ExampleRead() {
	b, err := Read("boundedfile.go", 1<<20, "MaxSourceBytes")
	if err != nil {
		panic(err)
	}
	_ = b
	// Output:
}
