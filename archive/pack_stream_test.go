package archive_test

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/snapshot"
)

// referenceGzip is the chunked format as first written (a new
// compress/flate writer per 256 KiB chunk over the whole tar image): the
// streaming packer must give exactly these bytes.
func referenceGzip(tar []byte) []byte {
	const chunk = 256 << 10
	out := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255}
	n := max(1, (len(tar)+chunk-1)/chunk)
	for i := range n {
		start, end := i*chunk, min(len(tar), (i+1)*chunk)
		var b bytes.Buffer
		w, _ := flate.NewWriterDict(&b, 6, tar[max(0, start-32<<10):start])
		w.Write(tar[start:end])
		if i == n-1 {
			w.Close()
		} else {
			w.Flush()
		}
		out = append(out, b.Bytes()...)
	}
	out = binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(tar))
	return binary.LittleEndian.AppendUint32(out, uint32(len(tar)))
}

// tarOfArchive is the tar stream inside a gzip archive.
func tarOfArchive(t *testing.T, b []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tar, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return tar
}

// The bytes are frozen: for tar streams of one chunk, exactly n chunks,
// n chunks and a bit, and many chunks, the streaming packer writes what
// the first implementation wrote.
func TestPackBytesAreFrozenAcrossChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	// A header and padding make 1024 bytes around each file's data: sizes
	// are chosen so that the tar is exactly 2 chunks, just under, just over.
	const chunk = 256 << 10
	for _, sizes := range [][]int{
		{100},
		{chunk - 2048},        // one file: 512 + data + 1024 = 1 chunk - 512
		{2*chunk - 1536},      // exactly 2 chunks
		{2*chunk - 1536 + 1},  // 2 chunks and a block
		{700_000, 3, 300_000}, // several chunks
	} {
		files := map[string][]byte{}
		for i, n := range sizes {
			data := make([]byte, n)
			for j := range data {
				data[j] = "abcdefgh \n{}"[rng.IntN(12)]
			}
			files[fmt.Sprintf("f%d", i)] = data
		}
		s, _ := snapshot.FromFiles(files)
		b, err := archive.Pack(s, archive.PackOptions{Root: "demo"})
		if err != nil {
			t.Fatal(err)
		}
		tar := tarOfArchive(t, b)
		if want := referenceGzip(tar); !bytes.Equal(b, want) {
			t.Fatalf("sizes %v (tar %d bytes): %d bytes, the frozen format has %d", sizes, len(tar), len(b), len(want))
		}
	}
}

// failAfter fails once n bytes were written.
type failAfter struct{ n int }

var errDiskFull = errors.New("disk full")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n < len(p) {
		return 0, errDiskFull
	}
	f.n -= len(p)
	return len(p), nil
}

// An error of the writer stops the packing and is returned; no goroutine
// is left behind. A bad path is refused before anything is written.
func TestPackToErrors(t *testing.T) {
	s := benchSnapshot(50, 1<<20)
	before := runtime.NumGoroutine()
	for _, n := range []int{0, 5, 20_000} {
		if err := archive.PackTo(&failAfter{n: n}, s, archive.PackOptions{}); !errors.Is(err, errDiskFull) {
			t.Fatalf("fail after %d: %v", n, err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Errorf("%d goroutines left, %d before", g, before)
	}
	bad := &snapshot.Snapshot{Files: map[string][]byte{"ok": []byte("x"), "a/../x": nil}}
	var w bytes.Buffer
	if err := archive.PackTo(&w, bad, archive.PackOptions{}); !errors.Is(err, archive.ErrPath) || w.Len() != 0 {
		t.Errorf("bad path: %v, %d bytes written", err, w.Len())
	}
}
