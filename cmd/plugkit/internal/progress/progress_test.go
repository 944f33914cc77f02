package progress

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/internal/syncbuf"
)

// progressCmd is a command whose stderr is a buffer that its factory
// calls a terminal, with progress that waits delay.
func progressCmd(t *testing.T, asJSON bool, delay time.Duration) (*factory.Factory, *cobra.Command, *bytes.Buffer) {
	t.Helper()
	var errb bytes.Buffer
	f := &factory.Factory{Err: &errb, ErrTerminal: true, ProgressDelay: delay}
	cmd := &cobra.Command{}
	cmd.Flags().Bool("json", asJSON, "")
	cmd.SetErr(&errb)
	cmd.SetContext(context.Background())
	return f, cmd, &errb
}

// TestProgress: a bar draws on a terminal once the delay has passed, never
// with --json, never when stderr is not a terminal, and an operation that
// ends before the delay leaves no trace.
func TestProgress(t *testing.T) {
	f, cmd, errb := progressCmd(t, false, 0)
	p := Start(f, cmd, "fetch evil\x1b[2J", 3, false)
	time.Sleep(200 * time.Millisecond)
	p.Add(3)
	p.Done()
	p.Done() // idempotent
	if out := errb.String(); !strings.Contains(out, "fetch evil") || !strings.Contains(out, "3 / 3") || strings.Contains(out, "\x1b[2J") {
		t.Errorf("drawn bar: %q", out)
	}

	f, cmd, errb = progressCmd(t, false, time.Hour)
	p = Start(f, cmd, "quick", 1, false)
	p.Add(1)
	p.Done()
	if errb.Len() != 0 {
		t.Errorf("a quick operation drew %q", errb.String())
	}

	f, cmd, errb = progressCmd(t, true, 0)
	p = Start(f, cmd, "json", 1, false)
	p.Add(1)
	p.Done()
	if errb.Len() != 0 || p.bar != nil {
		t.Errorf("--json drew %q", errb.String())
	}

	// Not a terminal.
	f, cmd, _ = progressCmd(t, false, 0)
	f.ErrTerminal = false
	p = Start(f, cmd, "pipe", 1, true)
	if p.bar != nil || p.Reader(strings.NewReader("x")) == nil {
		t.Error("a bar on a non-terminal")
	}
}

// TestProgressConcurrentTransfers: transfers under way at once (push's
// config and layer, pull's) count on one bar, whose total is their sizes
// added up, and which ends with the last of them; a transfer after them
// starts a bar of its own.
func TestProgressConcurrentTransfers(t *testing.T) {
	f, cmd, errb := progressCmd(t, false, 0)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("x"), map[string]int{"/v2/p/blobs/sha256:a": 1 << 10, "/v2/p/blobs/sha256:b": 2 << 10}[r.URL.Path]))
	}))
	defer srv.Close()
	tr := &transport{f: f, cmd: cmd, name: "pull"}
	get := func(blob string) *http.Response {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, srv.URL+"/v2/p/blobs/sha256:"+blob, nil)
		req.RequestURI = ""
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	a, b := get("a"), get("b")
	if tr.open != 2 || tr.total != 3<<10 {
		t.Errorf("two transfers under way: open %d, total %d", tr.open, tr.total)
	}
	io.Copy(io.Discard, a.Body)
	if tr.bar.bar.completed() {
		t.Error("the bar ended when the first transfer was read")
	}
	io.Copy(io.Discard, b.Body)
	time.Sleep(200 * time.Millisecond)
	a.Body.Close()
	a.Body.Close() // once only
	if tr.bar == nil || tr.open != 1 {
		t.Fatalf("the bar ended with a transfer under way (open %d)", tr.open)
	}
	b.Body.Close()
	if tr.bar != nil || tr.open != 0 {
		t.Fatalf("the bar outlived its transfers (open %d)", tr.open)
	}
	if out := errb.String(); !strings.Contains(out, "3.0 KiB / 3.0 KiB") || strings.Contains(out, "2.0 KiB / 2.0 KiB") {
		t.Errorf("drawn: %q, want one bar of both transfers", out)
	}
	c := get("b")
	io.Copy(io.Discard, c.Body)
	c.Body.Close()
	if tr.total != 2<<10 || tr.bar != nil {
		t.Errorf("a later transfer: total %d, want a bar of its own", tr.total)
	}
}

// TestProgressLongName: a long name is cut to its verb and the end of its
// reference, so that the byte counts stay on the line.
func TestProgressLongName(t *testing.T) {
	f, cmd, errb := progressCmd(t, false, 0)
	p := Start(f, cmd, "push oci://registry.example.com/a/very/long/repository/path/of/the/plugin:1.2.3-rc.1", 3<<20, true)
	time.Sleep(200 * time.Millisecond)
	p.Add(3 << 20)
	p.Done()
	if out := errb.String(); !strings.Contains(out, "push …") || !strings.Contains(out, "plugin:1.2.3-rc.1") || !strings.Contains(out, "3.0 MiB / 3.0 MiB") {
		t.Errorf("drawn bar: %q", out)
	}
	for _, c := range []struct{ in, want string }{
		{"pull oci://r/p:1", "pull oci://r/p:1"},
		{"push " + strings.Repeat("界", 20), "push …" + strings.Repeat("界", 13)},
		{strings.Repeat("x", 40), strings.Repeat("x", 31) + "…"},
		{"fetch \x1b[2J" + strings.Repeat("y", 40), "fetch …" + strings.Repeat("y", 25)},
	} {
		if got := barName(c.in); got != c.want || columns(got) > maxBarName {
			t.Errorf("barName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestBarFrame: a frame is the name, the bar, the counters and the elapsed
// time, at most 80 columns; ending the bar completes it at what was
// counted.
func TestBarFrame(t *testing.T) {
	var out syncbuf.Buffer
	b := startBar(context.Background(), &out, "pull 界", 3<<10, true, 0)
	b.add(1 << 10)
	time.Sleep(300 * time.Millisecond)
	b.add(1<<10 + 1)
	b.end()
	drawn := out.String()
	if !strings.Contains(drawn, "pull 界") || !strings.Contains(drawn, "1.0 KiB / 3.0 KiB") || !strings.Contains(drawn, "2.0 KiB / 2.0 KiB") {
		t.Fatalf("frames %q", drawn)
	}
	escape := regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")
	for _, line := range strings.Split(escape.ReplaceAllString(drawn, ""), "\n") {
		if w := columns(strings.TrimRight(line, "\r")); w > barWidth {
			t.Errorf("a frame is %d columns, more than %d: %q", w, barWidth, line)
		}
	}
}

// TestBarStopsWithContext: a bar whose command is cancelled stops drawing
// (its last frame stays), and ending it afterwards draws nothing more.
func TestBarStopsWithContext(t *testing.T) {
	var out syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	b := startBar(ctx, &out, "pull", 10, false, 0)
	time.Sleep(300 * time.Millisecond)
	cancel()
	b.p.Wait()
	drawn := out.String()
	time.Sleep(300 * time.Millisecond)
	b.end()
	if drawn == "" || out.String() != drawn || strings.Contains(drawn, "10 / 10") {
		t.Errorf("drawn before the cancel %q, after the end %q", drawn, out.String())
	}
}
