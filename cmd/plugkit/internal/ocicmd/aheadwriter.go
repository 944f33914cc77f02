package ocicmd

import (
	"io"
)

// aheadWriter writes to w in a goroutine of its own, one buffer behind its
// caller, so that the caller's work and the writing share the CPUs: export
// reads and hashes blobs while the tar before them is written to the file
// and hashed. A write error is returned by a later Write or ReadFrom, and
// by Close, which every user calls once, last.
type aheadWriter struct {
	buf  []byte           // being filled
	full chan []byte      // to write
	free chan aheadResult // written
	done chan error
}

// aheadResult is a written buffer and the writer's first error, if any.
type aheadResult struct {
	buf []byte
	err error
}

// newAheadWriter starts writing to w through two buffers of size bytes.
func newAheadWriter(w io.Writer, size int) *aheadWriter {
	a := &aheadWriter{buf: make([]byte, 0, size), full: make(chan []byte), free: make(chan aheadResult, 2), done: make(chan error, 1)}
	a.free <- aheadResult{buf: make([]byte, 0, size)}
	go func() {
		var err error
		for b := range a.full {
			if err == nil {
				_, err = w.Write(b)
			}
			a.free <- aheadResult{b[:0], err}
		}
		a.done <- err
	}()
	return a
}

// swap hands the filled buffer over and takes the other, once written.
func (a *aheadWriter) swap() error {
	a.full <- a.buf
	r := <-a.free
	a.buf = r.buf
	return r.err
}

// Write copies p into the buffers.
func (a *aheadWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if len(a.buf) == cap(a.buf) {
			if err := a.swap(); err != nil {
				return n, err
			}
		}
		c := copy(a.buf[len(a.buf):cap(a.buf)], p)
		a.buf, p, n = a.buf[:len(a.buf)+c], p[c:], n+c
	}
	return n, nil
}

// ReadFrom reads r to its end straight into the buffers (io.Copy uses
// it), sparing a copy.
func (a *aheadWriter) ReadFrom(r io.Reader) (int64, error) {
	var n int64
	for {
		if len(a.buf) == cap(a.buf) {
			if err := a.swap(); err != nil {
				return n, err
			}
		}
		m, err := r.Read(a.buf[len(a.buf):cap(a.buf)])
		a.buf, n = a.buf[:len(a.buf)+m], n+int64(m)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// Close writes what is buffered, stops the goroutine and returns the
// first write error.
func (a *aheadWriter) Close() error {
	if len(a.buf) > 0 {
		a.full <- a.buf
	}
	close(a.full)
	return <-a.done
}
