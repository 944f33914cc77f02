package archive_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"runtime"
	"testing"
	"testing/iotest"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/internal/hostile"
	"github.com/plugkit/plugkit/snapshot"
)

// unpackers are the two ways into an archive: its bytes in memory, and a
// stream of them read in odd sizes (half of what is asked).
var unpackers = []struct {
	name   string
	unpack func([]byte, archive.UnpackOptions) (*snapshot.Snapshot, error)
}{
	{"Unpack", archive.Unpack},
	{"UnpackFrom", func(b []byte, opts archive.UnpackOptions) (*snapshot.Snapshot, error) {
		return archive.UnpackFrom(iotest.HalfReader(bytes.NewReader(b)), opts)
	}},
}

// unpackNoData unpacks b from a stream with NoData, and returns the
// snapshot with the data OnFile was given put back in.
func unpackNoData(b []byte, lim archive.Limits) (*snapshot.Snapshot, error) {
	got := map[string][]byte{}
	s, err := archive.UnpackFrom(iotest.HalfReader(bytes.NewReader(b)), archive.UnpackOptions{Limits: lim, NoData: true,
		OnFile: func(p string, _ fs.FileMode, data []byte) error { got[p] = data; return nil }})
	if err != nil {
		return nil, err
	}
	for p, data := range s.Files {
		if data != nil {
			return nil, errors.New("NoData kept the data of " + p)
		}
		s.Files[p] = got[p]
	}
	return s, nil
}

func TestUnpackFromNoData(t *testing.T) {
	want, _ := snapshot.FromFiles(map[string][]byte{"plugin.json": []byte(`{"name":"p"}`), "skills/a/SKILL.md": []byte("---\nname: a\n---\n"), "empty": nil})
	b, err := archive.Pack(want, archive.PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := unpackNoData(b, archive.Limits{})
	if err != nil || !got.Equal(want) {
		t.Fatalf("UnpackFrom with NoData gave OnFile %v, %v; want the packed files", got, err)
	}
	// NoData without OnFile has nowhere else to put the data: it is kept.
	s, err := archive.UnpackFrom(bytes.NewReader(b), archive.UnpackOptions{NoData: true})
	if err != nil || !s.Equal(want) {
		t.Fatalf("NoData without OnFile: %v, %v", s, err)
	}
}

// MaxArchiveBytes holds for a stream as for bytes: an archive of exactly
// the limit is read, one byte more is a *LimitError, and no more than one
// byte past the limit is read.
func TestUnpackFromMaxArchiveBytes(t *testing.T) {
	one, _ := snapshot.FromFiles(map[string][]byte{"plugin.json": []byte(`{"name":"p"}`)})
	b, err := archive.Pack(one, archive.PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, extra := range []int{0, 1, 4096} {
		// Zeros after the gzip member are allowed; past the limit they
		// are not read.
		in := append(bytes.Clone(b), make([]byte, extra)...)
		r := &countingReader{r: bytes.NewReader(in)}
		_, err := archive.UnpackFrom(r, archive.UnpackOptions{Limits: archive.Limits{MaxArchiveBytes: int64(len(b))}})
		var le *archive.LimitError
		switch {
		case extra == 0 && err != nil:
			t.Errorf("an archive of exactly the limit: %v", err)
		case extra > 0 && (!errors.As(err, &le) || le.Limit != "MaxArchiveBytes"):
			t.Errorf("%d bytes past the limit: %v, want a MaxArchiveBytes LimitError", extra, err)
		}
		if r.n > int64(len(b))+1 {
			t.Errorf("%d bytes past the limit: read %d bytes of a limit of %d", extra, r.n, len(b))
		}
	}
}

// An error reading the stream is returned, not taken for the end of the
// archive, wherever it comes.
func TestUnpackFromReadError(t *testing.T) {
	two, _ := snapshot.FromFiles(map[string][]byte{"plugin.json": []byte(`{"name":"p"}`), "big": bytes.Repeat([]byte("x"), 100000)})
	b, err := archive.Pack(two, archive.PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	broken := errors.New("disk on fire")
	for _, at := range []int{0, 10, len(b) / 2, len(b)} {
		r := io.MultiReader(bytes.NewReader(b[:at]), iotest.ErrReader(broken))
		if _, err := archive.UnpackFrom(r, archive.UnpackOptions{}); !errors.Is(err, broken) {
			t.Errorf("read error after %d bytes: %v", at, err)
		}
	}
	// Nonzero bytes after the gzip member are trailing data, as for Unpack.
	if _, err := archive.UnpackFrom(bytes.NewReader(append(bytes.Clone(b), 0, 0, 1)), archive.UnpackOptions{}); !errors.Is(err, archive.ErrTrailingData) {
		t.Errorf("trailing data: %v", err)
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestUnpackFromNoDataHoldsLittle: streamed with NoData, an archive of
// 8 MiB of files holds the file being handed over and the read-ahead's
// buffers, never the files handed over before, where unpacking that keeps
// the data holds the whole payload (which shows the measure can fail).
// What is held is the live heap after a forced collection at each OnFile,
// with the file given kept alive as a caller writing it out would. The
// most heap in use, which this test measured before, also counts the
// files already read that are garbage the collector has not yet freed: on
// a loaded machine, where the collector's workers wait for a core, that
// passed half the payload while the unpacker itself held a small part.
func TestUnpackFromNoDataHoldsLittle(t *testing.T) {
	const n, size = 64, 128 << 10
	s, _ := snapshot.FromFiles(hostile.Incompressible("f", n, size))
	b, err := archive.Pack(s, archive.PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s = nil
	payload := uint64(n * size)
	var got int
	unpack := func(noData bool, sample func()) {
		got = 0
		_, err = archive.UnpackFrom(bytes.NewReader(b), archive.UnpackOptions{NoData: noData,
			OnFile: func(_ string, _ fs.FileMode, data []byte) error {
				got += len(data)
				sample()
				runtime.KeepAlive(data)
				return nil
			}})
	}
	streamed := hostile.LivePeak(func(sample func()) { unpack(true, sample) })
	if err != nil || got != n*size {
		t.Fatalf("UnpackFrom with NoData: %v, %d bytes given to OnFile", err, got)
	}
	held := hostile.LivePeak(func(sample func()) { unpack(false, sample) })
	if err != nil || got != n*size {
		t.Fatalf("UnpackFrom: %v, %d bytes given to OnFile", err, got)
	}
	t.Logf("live heap at most for %d bytes of files: streamed with NoData %d, kept %d", payload, streamed, held)
	if streamed > payload/2 {
		t.Errorf("UnpackFrom with NoData held %d bytes of heap for %d bytes of files, want at most half", streamed, payload)
	}
	if held < payload*9/10 {
		t.Errorf("UnpackFrom keeping the data held %d bytes for %d bytes of files: the measure cannot see them held", held, payload)
	}
}
