// Package progress draws progress bars on a terminal's stderr for
// transfers and for operations on several plugins, and makes the HTTP
// clients whose transfers show as bars.
package progress

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/internal/terminal"
)

// Progress is a progress bar on stderr for a transfer (bytes) or an
// operation on several plugins (a count). It draws only when stderr is a
// terminal, the verb prints no JSON, and the operation has lasted longer
// than a second; otherwise every method does nothing, so verbs call it
// unconditionally. The bar uses no colour (NO_COLOR holds trivially).
//
//	p := progress.Start(f, cmd, "fetch release-notes", size, true)
//	defer p.Done()
//	io.Copy(dst, p.Reader(body))
//
// The bar is drawn by mpb (progressdraw.go).
type Progress struct {
	bar *bar // nil when nothing can draw
}

// Start starts a bar named name (untrusted text is made safe) for
// total units, bytes when bytes is set; total <= 0 means unknown.
func Start(f *factory.Factory, cmd *cobra.Command, name string, total int64, bytes bool) *Progress {
	if !canDraw(f, cmd) {
		return &Progress{}
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return &Progress{bar: startBar(ctx, cmd.ErrOrStderr(), barName(name), max(total, 0), bytes, f.ProgressDelay)}
}

// maxBarName is the widest a bar's name is drawn, in columns: a long
// reference would otherwise push the counters off an 80-column line.
const maxBarName = 32

// barName makes name safe for the terminal and at most maxBarName columns
// wide, keeping its verb and the end of what follows (a reference's
// repository and tag say more than its registry).
func barName(name string) string {
	name = terminal.Safe(name)
	if columns(name) <= maxBarName {
		return name
	}
	verb, rest, _ := strings.Cut(name, " ")
	keep := maxBarName - columns(verb) - 2 // the space and "…"
	if keep < 8 {
		return truncateColumns(name, maxBarName-1) + "…"
	}
	r := []rune(rest)
	i := len(r)
	for w := 0; i > 0 && w+runeColumns(r[i-1]) <= keep; i-- {
		w += runeColumns(r[i-1])
	}
	return verb + " …" + string(r[i:])
}

// Reader counts what is read through r.
func (pr *Progress) Reader(r io.Reader) io.Reader {
	if pr.bar == nil {
		return r
	}
	return countingReader{r: r, bar: pr.bar}
}

// SetTotal makes the bar's total n units.
func (pr *Progress) SetTotal(n int64) {
	if pr.bar != nil {
		pr.bar.setTotal(n)
	}
}

// Add counts n more units done.
func (pr *Progress) Add(n int) {
	if pr.bar != nil {
		pr.bar.add(int64(n))
	}
}

// Done ends the bar: completed if it was drawn, removed without a trace if
// the operation ended before it showed.
func (pr *Progress) Done() {
	if pr.bar != nil {
		pr.bar.end()
	}
}

// TransferTimeout bounds one registry request of a client that shows its
// transfers, as distribution's default client does.
const TransferTimeout = 5 * time.Minute

// canDraw reports whether cmd may draw progress: not with --json, and
// only on a terminal.
func canDraw(f *factory.Factory, cmd *cobra.Command) bool {
	return !command.JSONRequested(cmd) && f.ErrTerminal
}

// Client is the HTTP client of a registry verb that transfers an
// archive (fetch, publish, push, pull): it shows artifact and blob
// transfers as progress bars named name, and retries as both registry
// clients do (distribution.RetryTransport); timeout bounds each request
// as the client's default does (0: none, as for OCI blobs). It is nil,
// each client's default, where no bar can draw (--json, stderr not a
// terminal).
func Client(f *factory.Factory, cmd *cobra.Command, name string, timeout time.Duration) *http.Client {
	if !canDraw(f, cmd) {
		return nil
	}
	return &http.Client{Timeout: timeout, Transport: distribution.RetryTransport(&transport{f: f, cmd: cmd, name: name})}
}

// progressTransport draws a bar for the body of an upload to /publish or
// of an OCI blob, and of a download from /artifacts/ or of an OCI blob:
// the requests whose size is an archive's. Small transfers end before a
// bar would show. Transfers under way at once (push sends config and
// layer together, pull fetches them together) share one bar, counting
// their bytes together, so that no two bars draw over each other.
type transport struct {
	f    *factory.Factory
	cmd  *cobra.Command
	name string

	mu    sync.Mutex
	bar   *Progress // of the transfers under way; nil between them
	open  int       // transfers counted on bar and not yet closed
	total int64     // their sizes added up; -1 when one is unknown
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	path := req.URL.Path
	if req.Body != nil && (strings.HasSuffix(path, "/publish") || strings.Contains(path, "/blobs/uploads/")) {
		p := t.start(req.ContentLength)
		body := req.Body
		req = req.Clone(req.Context())
		req.Body = progressBody{Reader: p.Reader(body), body: body, end: t.end, once: new(sync.Once)}
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || !(strings.Contains(path, "/artifacts/") || strings.Contains(path, "/blobs/sha256:")) {
		return resp, err
	}
	p := t.start(resp.ContentLength)
	resp.Body = progressBody{Reader: p.Reader(resp.Body), body: resp.Body, end: t.end, once: new(sync.Once)}
	return resp, nil
}

// start counts a transfer of size bytes (negative: unknown) on the bar of
// the transfers under way, starting one if there is none. The bar's total
// is only ever set, never given at the start: a bar started with a total
// completes itself when that much is read, before the other transfers.
func (t *transport) start(size int64) *Progress {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bar == nil {
		t.bar, t.total = Start(t.f, t.cmd, t.name, 0, true), 0
	}
	t.open++
	if t.total >= 0 && size >= 0 {
		t.total += size
		t.bar.SetTotal(t.total)
	} else {
		t.total = -1
	}
	return t.bar
}

// end ends a transfer; the last one under way ends the bar.
func (t *transport) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.open--; t.open == 0 {
		t.bar.Done()
		t.bar = nil
	}
}

// progressBody is a request or response body counted by a bar; closing
// it ends its transfer.
type progressBody struct {
	io.Reader
	body io.Closer
	end  func()
	once *sync.Once
}

func (b progressBody) Close() error {
	b.once.Do(b.end)
	return b.body.Close()
}

// Count is an install.Progress: it moves a count bar to done of total and
// ends it at the last plugin, before the verb asks for consent or prints.
func (pr *Progress) Count(done, total int) {
	if pr.bar == nil {
		return
	}
	pr.bar.setTotal(int64(total))
	pr.bar.setCurrent(int64(done))
	if done >= total {
		pr.Done()
	}
}

// countingReader counts on bar the bytes read through r.
type countingReader struct {
	r   io.Reader
	bar *bar
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.bar.add(int64(n))
	return n, err
}
