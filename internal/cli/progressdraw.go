package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"golang.org/x/text/width"
)

// barWidth is the width of a drawn bar line, in columns, whatever the
// terminal's: the name, the bar, the counters and the elapsed time.
const barWidth = 80

// barRefresh is how often a shown bar is drawn again.
const barRefresh = 150 * time.Millisecond

// bar is one progress bar on a terminal, drawn by a goroutine of its own
// from the counts the transfer updates, as mpb drew it: the name, a bar
// of "=" with a ">" tip in brackets, the counters and the elapsed time,
// barWidth columns in all, each frame drawn over the last by moving the
// cursor up a line and erasing to the end of the screen.
type bar struct {
	current, total atomic.Int64
	ended          atomic.Bool // end was called

	w     io.Writer
	name  string
	bytes bool // counts bytes, shown in KiB, MiB, …
	start time.Time
	stop  chan struct{} // closed by end
	gone  chan struct{} // closed when the drawing goroutine has returned
	once  sync.Once
	drawn bool // a frame is on the terminal; only the drawing goroutine uses it
}

// startBar starts a bar of total units that shows after delay (at once if
// delay <= 0) and stops drawing when ctx is done.
func startBar(ctx context.Context, w io.Writer, name string, total int64, bytes bool, delay time.Duration) *bar {
	b := &bar{w: w, name: name, bytes: bytes, start: time.Now(), stop: make(chan struct{}), gone: make(chan struct{})}
	b.total.Store(total)
	go b.run(ctx, delay)
	return b
}

// run waits for the delay, then draws a frame every barRefresh until the
// bar ends, and the last frame then. A bar that ends before the delay
// draws nothing.
func (b *bar) run(ctx context.Context, delay time.Duration) {
	defer close(b.gone)
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-b.stop:
			return
		case <-ctx.Done():
			return
		}
	}
	tick := time.NewTicker(barRefresh)
	defer tick.Stop()
	for {
		select {
		case <-b.stop:
			b.draw(true)
			return
		case <-ctx.Done():
			return // the frame drawn last stays, as the verb stops
		default:
		}
		b.draw(false)
		select {
		case <-tick.C:
		case <-b.stop:
		case <-ctx.Done():
		}
	}
}

// end stops the bar and waits for its last frame, if it showed.
func (b *bar) end() {
	b.once.Do(func() {
		b.ended.Store(true)
		close(b.stop)
		<-b.gone
	})
}

// draw writes a frame; the last one completes the bar, its total then
// being what was counted.
func (b *bar) draw(last bool) {
	cur, total := b.current.Load(), b.total.Load()
	if last {
		total = cur
	}
	var line strings.Builder
	if b.drawn {
		line.WriteString("\x1b[1A\x1b[J")
	}
	b.drawn = true
	counters := b.count(cur) + " / " + b.count(total)
	elapsed := time.Since(b.start).Truncate(time.Second).String()
	line.WriteString(b.name)
	line.WriteString("  [")
	inner := max(barWidth-columns(b.name)-len("  [] ")-len(counters)-len(" ")-len(elapsed), 0)
	line.WriteString(fill(inner, cur, total, last))
	fmt.Fprintf(&line, "] %s %s\n", counters, elapsed)
	io.WriteString(b.w, line.String())
}

// count formats n units: bytes as mpb's CountersKibiByte("% .1f") did.
func (b *bar) count(n int64) string {
	if !b.bytes {
		return strconv.FormatInt(n, 10)
	}
	units := []string{"b", "KiB", "MiB", "GiB", "TiB"}
	unit, size := 0, int64(1)
	for unit < len(units)-1 && n >= size<<10 {
		unit, size = unit+1, size<<10
	}
	return strconv.FormatFloat(float64(n)/float64(size), 'f', 1, 64) + " " + units[unit]
}

// fill is the inside of a bar inner columns wide at cur of total: "=" for
// what is done, a ">" tip while it is not complete, "-" for the rest.
func fill(inner int, cur, total int64, complete bool) string {
	done := 0
	if total > 0 {
		done = min(int((float64(inner)*float64(cur)/float64(total))+0.5), inner)
	}
	if done == 0 {
		return strings.Repeat("-", inner)
	}
	if complete {
		return strings.Repeat("=", done) + strings.Repeat("-", inner-done)
	}
	return strings.Repeat("=", done-1) + ">" + strings.Repeat("-", inner-done)
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
