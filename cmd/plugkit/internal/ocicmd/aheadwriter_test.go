package ocicmd

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// Bytes written through Write and ReadFrom, in pieces that straddle the
// buffers, arrive whole and in order once Close returns.
func TestAheadWriterKeepsOrder(t *testing.T) {
	var want, got bytes.Buffer
	a := newAheadWriter(&got, 7)
	for i := range 50 {
		p := bytes.Repeat([]byte{byte('a' + i%26)}, i%11)
		want.Write(p)
		if i%2 == 0 {
			a.Write(p)
		} else if _, err := io.Copy(a, bytes.NewReader(p)); err != nil { // ReadFrom
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("got %q\nwant %q", got.Bytes(), want.Bytes())
	}
}

// brokenWriter fails every write, as a full disk does.
type brokenWriter struct{}

var errBroken = errors.New("disk full")

func (brokenWriter) Write([]byte) (int, error) { return 0, errBroken }

// A write error comes back from a later Write or ReadFrom, and from
// Close, and stops nothing from ending.
func TestAheadWriterReportsWriteErrors(t *testing.T) {
	a := newAheadWriter(brokenWriter{}, 4)
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		_, err = a.Write([]byte("abc"))
	}
	if !errors.Is(err, errBroken) {
		t.Errorf("Write = %v, want the write error", err)
	}
	if _, err := io.Copy(a, bytes.NewReader(make([]byte, 64))); !errors.Is(err, errBroken) {
		t.Errorf("ReadFrom = %v, want the write error", err)
	}
	if err := a.Close(); !errors.Is(err, errBroken) {
		t.Errorf("Close = %v, want the write error", err)
	}
	if err := newAheadWriter(brokenWriter{}, 4).Close(); err != nil {
		t.Errorf("Close of an unused writer = %v", err)
	}
}
