package boundedfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
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
// given, whatever the size it is told to expect.
func TestReadAll(t *testing.T) {
	for _, size := range []int64{0, 1, 5, 6, 1 << 20, -1} {
		b, err := ReadAll(strings.NewReader("12345"), size, 5, "MaxThing", "member")
		if err != nil || string(b) != "12345" {
			t.Errorf("size %d, at the limit: %q %v", size, b, err)
		}
		_, err = ReadAll(strings.NewReader("123456"), size, 5, "MaxThing", "member")
		if !errors.Is(err, snapshot.ErrLimit) || !strings.Contains(err.Error(), "member") {
			t.Errorf("size %d, past the limit: %v", size, err)
		}
	}
}

// Told the size, ReadAll reads into one buffer, not a doubling series
// (an OCI layout's index.json of 2,000 entries cost four times its size).
func TestReadAllSized(t *testing.T) {
	data := strings.Repeat("x", 100<<10)
	for _, c := range []struct {
		size     int64
		maxBytes int
	}{{int64(len(data)), len(data) + 16<<10}, {0, 2 * len(data)}} {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		if _, err := ReadAll(strings.NewReader(data), c.size, 1<<20, "MaxThing", "member"); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&ms)
		got := int(ms.TotalAlloc - before)
		if c.size > 0 && got > c.maxBytes || c.size == 0 && got < c.maxBytes {
			t.Errorf("size %d: %d bytes allocated to read %d", c.size, got, len(data))
		}
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
