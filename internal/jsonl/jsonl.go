// Package jsonl reads and writes streams of newline-delimited JSON
// messages, the framing of MCP over stdio, for a relay that takes some
// whole messages out of a stream and hands the rest, byte for byte, to
// an MCP SDK reading the same stream.
package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
)

// bufferSize is the read buffer of a Filter: a line longer than this is
// collected in a separate slice, up to the Filter's limit.
const bufferSize = 32 << 10

// Filter is an io.Reader over a stream of newline-delimited JSON that
// first offers every complete line to a function, which takes it out of
// the stream or leaves it to be read through unchanged.
//
// A Filter offers only lines that are whole messages: once a line that
// is not a complete JSON value is read through (a message spread over
// several lines, or garbage the reader will reject), every later line is
// read through too, so that a filter never takes a piece out of the
// middle of a message.
type Filter struct {
	r     *bufio.Reader
	limit int
	take  func(line []byte) bool

	pass    []byte // the part of the current line not yet read through
	long    []byte // the start of a line longer than the buffer
	inLong  bool   // reading through the rest of a line over the limit
	stopped bool   // a line was not a whole message: offer no more
	err     error  // the stream's error, returned once pass is read
}

// NewFilter returns a Filter over r. take gets each complete line (one
// JSON message, without its line ending) and reports whether it took it;
// the line is valid only during the call. Lines longer than limit bytes
// are never offered.
func NewFilter(r io.Reader, limit int, take func(line []byte) bool) *Filter {
	return &Filter{r: bufio.NewReaderSize(r, bufferSize), limit: limit, take: take}
}

// Read implements io.Reader: it returns the bytes of the lines take left.
func (f *Filter) Read(p []byte) (int, error) {
	for len(f.pass) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.next()
	}
	n := copy(p, f.pass)
	f.pass = f.pass[n:]
	return n, nil
}

// next reads the next line, or the next piece of a long one, into pass
// unless take takes it.
func (f *Filter) next() {
	chunk, err := f.r.ReadSlice('\n')
	if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
		f.err = err
	}
	full := errors.Is(err, bufio.ErrBufferFull)
	switch {
	case f.inLong:
		f.inLong = full
		f.pass = chunk
		return
	case full:
		f.long = append(f.long, chunk...)
		if len(f.long) > f.limit {
			f.pass, f.long, f.inLong = f.long, nil, true
		}
		return
	}
	line := chunk
	if f.long != nil {
		line = append(f.long, chunk...)
		f.long = nil
	}
	if len(line) > f.limit {
		f.pass = line
		return
	}
	if f.err != nil && len(line) > 0 {
		// A last line without its newline: nothing follows it, and the
		// reader decides what it is.
		f.pass = line
		return
	}
	msg := bytes.TrimRight(line, "\r\n")
	if !f.stopped && len(bytes.TrimSpace(msg)) > 0 && f.take(msg) {
		return
	}
	if !f.stopped && len(bytes.TrimSpace(msg)) > 0 && !json.Valid(msg) {
		f.stopped = true
	}
	f.pass = line
}

// Writer serializes whole messages from several writers onto one stream:
// each Write is one message, never interleaved with another.
type Writer struct {
	mu sync.Mutex
	w  io.WriteCloser
}

// NewWriter returns a Writer over w.
func NewWriter(w io.WriteCloser) *Writer { return &Writer{w: w} }

// Write writes p, one or more whole lines, at once.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// Close closes the stream.
func (w *Writer) Close() error { return w.w.Close() }
