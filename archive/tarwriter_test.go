package archive_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/archive"
)

// writerOnly hides a writer's io.ReaderFrom, so that TarWriter copies
// through its own buffer.
type writerOnly struct{ io.Writer }

// TarWriter writes the same stream to a file (an io.ReaderFrom, which
// copies for itself) and to a plain writer (copied through its buffer),
// which archive/tar reads back; a reader giving fewer or more bytes than
// the size is ErrSize on both.
func TestTarWriterWriteFile(t *testing.T) {
	data := strings.Repeat("0123456789", 100<<10) // over one copy buffer
	write := func(w io.Writer) error {
		tw := archive.NewTarWriter(w)
		if err := tw.WriteFile("big", 0o644, int64(len(data)), strings.NewReader(data)); err != nil {
			return err
		}
		if err := tw.WriteBytes("small", 0o755, []byte("x")); err != nil {
			return err
		}
		return tw.Close()
	}
	var plain bytes.Buffer
	if err := write(writerOnly{&plain}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "t.tar"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := write(f); err != nil {
		t.Fatal(err)
	}
	fromFile, _ := os.ReadFile(f.Name())
	if !bytes.Equal(fromFile, plain.Bytes()) {
		t.Fatalf("a file got %d bytes, a plain writer %d", len(fromFile), plain.Len())
	}
	tr := tar.NewReader(&plain)
	for _, want := range []struct {
		name string
		size int
	}{{"big", len(data)}, {"small", 1}} {
		h, err := tr.Next()
		if err != nil || h.Name != want.name || h.Size != int64(want.size) {
			t.Fatalf("entry %v: %v", h, err)
		}
	}
	// To a file, no copy buffer is made (it had 256 KiB, never used).
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	if err := write(f); err != nil {
		t.Fatal(err)
	}
	if runtime.ReadMemStats(&ms); ms.TotalAlloc-before > 64<<10 {
		t.Errorf("writing to a file allocated %d bytes", ms.TotalAlloc-before)
	}
	for _, w := range []io.Writer{writerOnly{io.Discard}, f} {
		for _, r := range []string{data[:10], data + "!"} {
			err := archive.NewTarWriter(w).WriteFile("f", 0o644, int64(len(data)), strings.NewReader(r))
			if !errors.Is(err, archive.ErrSize) {
				t.Errorf("%T, %d bytes for %d: %v", w, len(r), len(data), err)
			}
		}
	}
}
