package main

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/plugkit/plugkit/internal/terminal"
)

// progressDelay is how long an operation runs before its progress shows:
// quick ones never draw anything.
var progressDelay = time.Second

// stderrIsTerminal reports whether w, a verb's stderr, is a terminal (by
// the one check plugkit has, isTerminal); tests replace it.
var stderrIsTerminal = realTerminalCheck

func realTerminalCheck(w any) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}

// progress is a progress bar on stderr for a transfer (bytes) or an
// operation on several plugins (a count). It draws only when stderr is a
// terminal, the verb prints no JSON, and the operation has lasted longer
// than a second; otherwise every method does nothing, so verbs call it
// unconditionally. The bar uses no colour (NO_COLOR holds trivially).
//
//	p := startProgress(cmd, "fetch release-notes", size, true)
//	defer p.done()
//	io.Copy(dst, p.reader(body))
type progress struct {
	p     *mpb.Progress
	bar   *mpb.Bar
	timer *time.Timer
	once  sync.Once
}

// startProgress starts a bar named name (untrusted text is made safe) for
// total units, bytes when bytes is set; total <= 0 means unknown.
func startProgress(cmd *cobra.Command, name string, total int64, bytes bool) *progress {
	w := cmd.ErrOrStderr()
	if jsonRequested(cmd) || !stderrIsTerminal(w) {
		return &progress{}
	}
	delay := make(chan any)
	p := mpb.NewWithContext(cmd.Context(), mpb.WithOutput(w), mpb.WithRenderDelay(delay), mpb.WithAutoRefresh(), mpb.WithWidth(40))
	counters := decor.CountersNoUnit("%d / %d")
	if bytes {
		counters = decor.CountersKibiByte("% .1f / % .1f")
	}
	bar := p.AddBar(max(total, 0),
		mpb.PrependDecorators(decor.Name(terminal.Safe(name), decor.WCSyncSpaceR)),
		mpb.AppendDecorators(counters, decor.Elapsed(decor.ET_STYLE_GO, decor.WCSyncSpace)))
	return &progress{p: p, bar: bar, timer: time.AfterFunc(progressDelay, func() { close(delay) })}
}

// reader counts what is read through r.
func (pr *progress) reader(r io.Reader) io.Reader {
	if pr.bar == nil {
		return r
	}
	rc, err := pr.bar.ProxyReader(r)
	if err != nil {
		return r
	}
	return rc
}

// add counts n more units done.
func (pr *progress) add(n int) {
	if pr.bar != nil {
		pr.bar.IncrBy(n)
	}
}

// done ends the bar: completed if it was drawn, removed without a trace if
// the operation ended before it showed.
func (pr *progress) done() {
	if pr.bar == nil {
		return
	}
	pr.once.Do(func() {
		if pr.timer.Stop() {
			pr.bar.Abort(true) // never shown: leave no line behind
		} else {
			pr.bar.SetTotal(-1, true)
		}
		pr.p.Wait()
	})
}
