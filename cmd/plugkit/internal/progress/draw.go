package progress

import (
	"context"
	"io"
	"sync"
	"time"
	"unicode"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/text/width"
)

// barWidth is the width of a drawn bar line, in columns, whatever the
// terminal's: the name, the bar, the counters and the elapsed time.
const barWidth = 80

// barRefresh is how often a shown bar is drawn again.
const barRefresh = 150 * time.Millisecond

// bar is one progress bar on a terminal, drawn by mpb: the name, the bar,
// the counters and the elapsed time. It is counted from the start and
// drawn only once delay has passed, so that one that ends sooner leaves no
// trace.
type bar struct {
	ctx   context.Context
	w     io.Writer
	name  string
	bytes bool
	timer *time.Timer // nil when the bar showed at once

	mu             sync.Mutex
	current, total int64
	ended          bool
	p              *mpb.Progress // nil until the bar shows
	b              *mpb.Bar
}

// startBar starts a bar of total units (0: unknown) that shows after
// delay (at once if delay <= 0) and stops drawing when ctx is done.
func startBar(ctx context.Context, w io.Writer, name string, total int64, bytes bool, delay time.Duration) *bar {
	b := &bar{ctx: ctx, w: w, name: name, bytes: bytes, total: total}
	if delay <= 0 {
		// Shown before the operation counts anything: a timer of no
		// delay could still fire after a quick transfer ended, and draw
		// nothing.
		b.show()
		return b
	}
	b.timer = time.AfterFunc(delay, b.show)
	return b
}

// show starts drawing the bar at its counts so far.
func (b *bar) show() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		return
	}
	b.p = mpb.NewWithContext(b.ctx, mpb.WithOutput(b.w), mpb.WithWidth(barWidth), mpb.WithRefreshRate(barRefresh), mpb.WithAutoRefresh())
	counters := decor.Counters(0, "%d / %d")
	if b.bytes {
		counters = decor.CountersKibiByte("% .1f / % .1f")
	}
	// Created with no total, the bar completes only when end says so, not
	// when a count reaches the total (transfers sharing a bar add theirs).
	b.b = b.p.New(0, mpb.BarStyle(), mpb.PrependDecorators(decor.Name(b.name, decor.WCSyncSpaceR)),
		mpb.AppendDecorators(counters, decor.Elapsed(decor.ET_STYLE_GO, decor.WC{W: 4})))
	b.b.SetTotal(b.total, false)
	b.b.SetCurrent(b.current)
}

// update changes the counts under the lock, and the drawn bar with them.
func (b *bar) update(f func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f()
	if b.b != nil {
		b.b.SetTotal(b.total, false)
		b.b.SetCurrent(b.current)
	}
}

// setTotal makes the bar's total n units.
func (b *bar) setTotal(n int64) { b.update(func() { b.total = n }) }

// setCurrent sets how many units are done.
func (b *bar) setCurrent(n int64) { b.update(func() { b.current = n }) }

// add counts n more units done.
func (b *bar) add(n int64) { b.update(func() { b.current += n }) }

// completed reports whether end was called.
func (b *bar) completed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ended
}

// end completes the bar, its total then being what was counted, and waits
// for its last frame, if it showed.
func (b *bar) end() {
	b.mu.Lock()
	if b.ended {
		b.mu.Unlock()
		return
	}
	b.ended = true
	if b.timer != nil {
		b.timer.Stop()
	}
	p := b.p
	if b.b != nil {
		b.b.SetTotal(-1, true)
	}
	b.mu.Unlock()
	if p != nil {
		p.Wait()
	}
}

// runeColumns is how many terminal columns r takes: two for East Asian
// wide and fullwidth characters, none for combining marks and format
// characters, one for the rest.
func runeColumns(r rune) int {
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	if unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf) {
		return 0
	}
	return 1
}

// columns is how many terminal columns s takes.
func columns(s string) int {
	n := 0
	for _, r := range s {
		n += runeColumns(r)
	}
	return n
}

// truncateColumns is the longest start of s at most n columns wide.
func truncateColumns(s string, n int) string {
	w := 0
	for i, r := range s {
		if w += runeColumns(r); w > n {
			return s[:i]
		}
	}
	return s
}
