package mcprun

import (
	"io"
	"sync"
)

// tail keeps the last max bytes written to it: a failed server's stderr
// ends with the reason, and a chatty one must not grow without bound.
type tail struct {
	mu   sync.Mutex
	max  int
	buf  []byte
	done chan struct{} // closed when the stream has been read to its end
}

func newTail(max int) *tail { return &tail{max: max, done: make(chan struct{})} }

// readFrom copies r into the tail until EOF, then closes r.
func (t *tail) readFrom(r io.ReadCloser) {
	defer close(t.done)
	defer r.Close()
	io.Copy(t, r)
}

// Write implements io.Writer.
func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) > t.max {
		p = p[len(p)-t.max:]
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String returns what the tail holds.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
