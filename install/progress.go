package install

import "sync"

// Progress is told, after each plugin a multi-plugin operation has
// fetched or checked, how many of how many are done: a CLI draws a bar
// with it, a host logs it. Calls come one at a time, though not always
// from the same goroutine.
type Progress func(done, total int)

// counter calls a Progress one plugin at a time; a nil *counter and a nil
// Progress do nothing.
type counter struct {
	mu    sync.Mutex
	fn    Progress
	done  int
	total int
}

func newCounter(fn Progress, total int) *counter {
	return &counter{fn: fn, total: total}
}

// step counts one plugin done.
func (c *counter) step() {
	if c == nil || c.fn == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done++
	c.fn(c.done, c.total)
}
