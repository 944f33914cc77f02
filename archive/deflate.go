package archive

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"io"
	"runtime"
	"sync"
)

// chunkSize is the unit of parallel compression. It is part of the
// format: the compressed bytes depend on it (never on the number of CPUs).
const chunkSize = 256 << 10

// dictSize is the deflate window each chunk is primed with.
const dictSize = 32 << 10

// gzipHeader is the fixed 10-byte gzip member header: deflate, no flags
// (so no name or comment), mtime 0, no extra flags, OS 255 ("unknown").
var gzipHeader = [10]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, gzipOSUnknown}

// chunk is one unit of work: its input, primed by the window before it,
// and its compressed output.
type chunk struct {
	buf   []byte // dict (up to dictSize bytes) then the chunk's input
	start int    // where the input starts in buf
	final bool
	out   bytes.Buffer
	done  chan struct{}
}

var chunks = sync.Pool{New: func() any { return &chunk{buf: make([]byte, 0, dictSize+chunkSize)} }}

// gzipWriter writes one gzip member of the tar stream written to it, in
// the chunked format (see the package documentation): fixed chunks of
// input compressed in parallel, each primed with the 32 KiB before it and
// ended with a sync flush, the last with the final block. The bytes depend
// only on the input. Write copies into the current chunk; full chunks go to
// the workers, and a writer goroutine puts their output in order on w, so
// memory stays at a few chunks whatever the size.
type gzipWriter struct {
	w      io.Writer
	cur    *chunk
	crc    uint32
	size   uint32
	jobs   chan *chunk // to the workers
	order  chan *chunk // to the writer, in stream order
	wg     sync.WaitGroup
	done   chan struct{} // the writer goroutine has finished
	err    error         // the first error of w, set by the writer goroutine
	failed chan struct{} // closed when err is set
}

func newGzipWriter(w io.Writer) *gzipWriter {
	procs := runtime.GOMAXPROCS(0)
	g := &gzipWriter{w: w, jobs: make(chan *chunk, procs), order: make(chan *chunk, 2*procs),
		done: make(chan struct{}), failed: make(chan struct{})}
	g.cur = newChunk(nil)
	for range procs {
		g.wg.Add(1)
		go g.work()
	}
	go g.writeOut()
	return g
}

// newChunk takes a chunk from the pool, primed with the last dictSize
// bytes of the previous chunk's input (prev nil for the first). Every
// chunk but the last is chunkSize bytes, so the window never reaches
// further back.
func newChunk(prev *chunk) *chunk {
	c := chunks.Get().(*chunk)
	c.buf, c.final, c.done = c.buf[:0], false, make(chan struct{})
	c.out.Reset()
	if prev != nil {
		c.buf = append(c.buf, prev.buf[len(prev.buf)-dictSize:]...)
	}
	c.start = len(c.buf)
	return c
}

// Write adds tar stream bytes.
func (g *gzipWriter) Write(p []byte) (int, error) {
	n := len(p)
	g.crc = crc32.Update(g.crc, crc32.IEEETable, p)
	g.size += uint32(len(p))
	for len(p) > 0 {
		room := g.cur.start + chunkSize - len(g.cur.buf)
		if room == 0 {
			if err := g.dispatch(); err != nil {
				return 0, err
			}
			continue
		}
		k := min(room, len(p))
		g.cur.buf = append(g.cur.buf, p[:k]...)
		p = p[k:]
	}
	return n, nil
}

// dispatch sends the current chunk to be compressed and starts the next
// (primed before the current one leaves: the writer recycles it). A chunk
// is sent only when more input follows it or at Close, so the last one is
// the final one.
func (g *gzipWriter) dispatch() error {
	var next *chunk
	if !g.cur.final {
		next = newChunk(g.cur)
	}
	select {
	case <-g.failed:
		if next != nil {
			chunks.Put(next)
		}
		return g.err
	case g.order <- g.cur:
	}
	g.jobs <- g.cur
	g.cur = next
	return nil
}

func (g *gzipWriter) work() {
	defer g.wg.Done()
	for c := range g.jobs {
		// A writer is made per chunk: compress/flate can reset a writer
		// only to the dictionary it was made with. The level is valid and
		// writes to a bytes.Buffer cannot fail.
		z, _ := flate.NewWriterDict(&c.out, CompressionLevel, c.buf[:c.start])
		z.Write(c.buf[c.start:])
		if c.final {
			z.Close()
		} else {
			z.Flush()
		}
		close(c.done)
	}
}

// writeOut writes the header, then each chunk's output in order; after an
// error of w it only recycles the chunks.
func (g *gzipWriter) writeOut() {
	defer close(g.done)
	fail := func(err error) {
		if g.err == nil {
			g.err = err
			close(g.failed)
		}
	}
	if _, err := g.w.Write(gzipHeader[:]); err != nil {
		fail(err)
	}
	for c := range g.order {
		<-c.done
		if g.err == nil {
			if _, err := g.w.Write(c.out.Bytes()); err != nil {
				fail(err)
			}
		}
		chunks.Put(c)
	}
}

// Close compresses the last chunk as the final one, waits for everything
// to be written and writes the gzip trailer.
func (g *gzipWriter) Close() error {
	g.cur.final = true
	err := g.dispatch()
	close(g.order)
	close(g.jobs)
	g.wg.Wait()
	<-g.done
	if err != nil {
		return err
	}
	if g.err != nil {
		return g.err
	}
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], g.crc)
	binary.LittleEndian.PutUint32(trailer[4:], g.size)
	_, err = g.w.Write(trailer[:])
	return err
}
