//go:build unix

package snapshot

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestChunkFilesApart: files cut from one chunk hold exactly their bytes,
// with no capacity past them, so that appending to one never writes into
// the next; an empty file, one just small enough to be cut and one just
// too large are read as they are.
func TestChunkFilesApart(t *testing.T) {
	dir := t.TempDir()
	sizes := []int{0, 1, 4210, chunkLargest, chunkLargest + 1, 7, chunkSize / 3}
	for i := range 200 {
		sizes = append(sizes, (i*977)%5000)
	}
	want := map[string][]byte{}
	for i, n := range sizes {
		name := fmt.Sprintf("f%03d", i)
		want[name] = bytes.Repeat([]byte{byte('a' + i%26)}, n)
		if err := os.WriteFile(filepath.Join(dir, name), want[name], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := ReadDir(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range s.Files {
		if cap(b) != len(b) {
			t.Errorf("%s: %d bytes with capacity %d", name, len(b), cap(b))
		}
		_ = append(b, '!') // must not reach another file
	}
	for name, b := range want {
		if !bytes.Equal(s.Files[name], b) {
			t.Errorf("%s: %d bytes read, want %d", name, len(s.Files[name]), len(b))
		}
	}
}

// TestChunkKeep: keep advances past what a file used, and only for the
// chunk's own memory.
func TestChunkKeep(t *testing.T) {
	var c chunk
	a := c.take(11)
	c.keep(a[:4])
	if b := c.take(1); &b[0] != &a[4] {
		t.Error("the next file does not start where the last one ended")
	}
	large := c.take(chunkLargest + 1)
	before := len(c.free)
	c.keep(large)
	c.keep(append(c.take(3)[:3:3], 'x')) // grew while read: its own memory
	if len(c.free) != before {
		t.Errorf("memory not cut from the chunk moved it: %d free, want %d", len(c.free), before)
	}
}
