package archive

import (
	"io"
	"sync"
)

// aheadBufSize and aheadBufs size the read-ahead of the decompressed
// stream: enough to keep the decompressor busy while the tar reader
// checks and hands over a file, few enough that memory stays small.
const (
	aheadBufSize = 128 << 10
	aheadBufs    = 4
)

// aheadPool keeps the buffers of finished read-aheads.
var aheadPool = sync.Pool{New: func() any { b := make([]byte, aheadBufSize); return &b }}

// ahead reads r on a goroutine of its own, up to aheadBufs buffers ahead
// of its reader: decompression runs on one CPU while the tar reader
// checks, copies and hands over the files on another, where one goroutine
// did both in turn (inflating is most of unpacking's CPU). It gives the
// bytes of r in order, then r's error. Close stops the goroutine and waits
// for it, so that r is the caller's again.
type ahead struct {
	full chan aheadChunk
	free chan *[]byte
	stop chan struct{}
	done chan struct{}
	cur  aheadChunk
}

// aheadChunk is one buffer read from r: its bytes not yet read, and the
// error r ended with after them, if any.
type aheadChunk struct {
	buf  *[]byte
	left []byte
	err  error
}

func newAhead(r io.Reader) *ahead {
	a := &ahead{full: make(chan aheadChunk, aheadBufs), free: make(chan *[]byte, aheadBufs),
		stop: make(chan struct{}), done: make(chan struct{})}
	for range aheadBufs {
		a.free <- aheadPool.Get().(*[]byte)
	}
	go a.run(r)
	return a
}

// run fills free buffers from r until r ends or fails, or Close.
func (a *ahead) run(r io.Reader) {
	defer close(a.done)
	for {
		var buf *[]byte
		select {
		case buf = <-a.free:
		case <-a.stop:
			return
		}
		b := *buf
		n, err := 0, error(nil)
		for n < len(b) && err == nil {
			var m int
			m, err = r.Read(b[n:])
			n += m
		}
		a.full <- aheadChunk{buf: buf, left: b[:n], err: err} // never blocks: aheadBufs buffers in all
		if err != nil {
			return
		}
	}
}

func (a *ahead) Read(p []byte) (int, error) {
	for len(a.cur.left) == 0 {
		if a.cur.err != nil {
			return 0, a.cur.err
		}
		if a.cur.buf != nil {
			a.free <- a.cur.buf
		}
		a.cur = <-a.full
	}
	n := copy(p, a.cur.left)
	a.cur.left = a.cur.left[n:]
	return n, nil
}

// Close stops the goroutine, waits for it (a read of r under way
// finishes first) and keeps the buffers for the next ahead.
func (a *ahead) Close() {
	close(a.stop)
	<-a.done
	if a.cur.buf != nil {
		aheadPool.Put(a.cur.buf)
	}
	for {
		select {
		case c := <-a.full:
			aheadPool.Put(c.buf)
		case buf := <-a.free:
			aheadPool.Put(buf)
		default:
			return
		}
	}
}
