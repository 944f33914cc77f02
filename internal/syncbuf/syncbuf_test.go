package syncbuf_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/plugkit/plugkit/internal/syncbuf"
)

// Writers and a reader at once lose nothing (and the race detector sees
// no race).
func TestConcurrentWritesAndReads(t *testing.T) {
	var b syncbuf.Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("x"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("x", 400) {
		t.Errorf("%d bytes written, want 400", len(got))
	}
}
