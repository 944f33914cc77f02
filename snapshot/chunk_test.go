//go:build unix

package snapshot

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unsafe"
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

// TestChunkKeep: small files are copied out of the scratch buffer one
// after another into the chunk; a large one, or one that grew past the
// scratch buffer while read, keeps its own memory.
func TestChunkKeep(t *testing.T) {
	var c chunk
	a := c.keep(append(c.buffer(5)[:0], "abcd"...))
	b := c.keep(append(c.buffer(3)[:0], "ef"...))
	if string(a) != "abcd" || string(b) != "ef" || unsafe.Pointer(&b[0]) != unsafe.Add(unsafe.Pointer(&a[0]), len(a)) {
		t.Errorf("files %q and %q are not cut one after another", a, b)
	}
	large := c.buffer(chunkLargest + 2)
	grown := append(c.buffer(3), make([]byte, chunkLargest)...)
	free := len(c.free)
	for _, own := range [][]byte{large, grown} {
		if k := c.keep(own); &k[0] != &own[0] || cap(k) != len(k) {
			t.Error("memory of its own was copied, or kept its spare capacity")
		}
	}
	if len(c.free) != free {
		t.Errorf("files of their own memory moved the chunk: %d free, want %d", len(c.free), free)
	}
	if e := c.keep(c.buffer(1)[:0]); e == nil || len(e) != 0 {
		t.Errorf("an empty file reads as %v", e)
	}
}

// TestChunkSizes: a reader's first chunk is small, so that a small plugin
// holds little; the following ones are big, for huge pages.
func TestChunkSizes(t *testing.T) {
	var c chunk
	var sizes []int
	for range 2*chunkSize/chunkLargest + 1 {
		before := len(c.free)
		c.keep(c.buffer(chunkLargest + 1)[:chunkLargest])
		if len(c.free) > before { // a new chunk, the file cut from its start
			sizes = append(sizes, len(c.free)+chunkLargest)
		}
	}
	if len(sizes) != 2 || sizes[0] != chunkSize || sizes[1] != bigChunkSize {
		t.Errorf("chunks of %v bytes, want %d then %d", sizes, chunkSize, bigChunkSize)
	}
}
