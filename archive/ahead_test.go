package archive

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
)

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// TestAheadGivesBytesThenError: the bytes of the source in order, in
// reads of any size, then its error, again at every later read.
func TestAheadGivesBytesThenError(t *testing.T) {
	want := bytes.Repeat([]byte("0123456789abcdef"), 3*aheadBufSize/16+77)
	broken := errors.New("broken")
	for _, end := range []error{io.EOF, broken} {
		src := io.MultiReader(iotest.HalfReader(bytes.NewReader(want)), iotest.ErrReader(end))
		a := newAhead(src)
		got, err := io.ReadAll(iotest.OneByteReader(io.LimitReader(a, 1000)))
		rest, err2 := io.ReadAll(a)
		got = append(got, rest...)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%v: read %d bytes (%v), want %d", end, len(got), err, len(want))
		}
		if end == io.EOF && err2 != nil || end != io.EOF && !errors.Is(err2, broken) {
			t.Fatalf("ReadAll ended with %v, want the source's %v", err2, end)
		}
		if n, err := a.Read(make([]byte, 10)); n != 0 || err != end {
			t.Fatalf("a read after the end: %d, %v; want 0, %v", n, err, end)
		}
		a.Close()
	}
}

// TestAheadCloseStopsReading: closed before its source ends, it stops
// reading it (at most its buffers ahead of what was read) and its
// goroutine is gone once Close returns.
func TestAheadCloseStopsReading(t *testing.T) {
	before := runtime.NumGoroutine()
	src := &countingReader{r: io.LimitReader(neverEnding{}, 1<<30)}
	a := newAhead(src)
	if _, err := io.ReadFull(a, make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	a.Close()
	read := src.n.Load()
	if read > (aheadBufs+1)*aheadBufSize {
		t.Errorf("read %d bytes of the source for 1,000 read: more than its %d buffers ahead", read, aheadBufs)
	}
	time.Sleep(10 * time.Millisecond)
	if src.n.Load() != read {
		t.Error("the source was read after Close returned")
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before", n, before)
	}
}

// neverEnding gives zeros.
type neverEnding struct{}

func (neverEnding) Read(p []byte) (int, error) { clear(p); return len(p), nil }
