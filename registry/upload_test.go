package registry

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	rtmetrics "runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plugkit/plugkit/distribution"
)

// drip starts a publish whose body sends one byte every interval, for at
// most total bytes, and returns a channel with the response status (or 0
// if the connection failed).
func drip(t *testing.T, url, token string, total int, interval time.Duration) (<-chan int, func()) {
	t.Helper()
	pr, pw := io.Pipe()
	stop := make(chan struct{})
	go func() {
		defer pw.Close()
		for range total {
			select {
			case <-stop:
				return
			case <-time.After(interval):
			}
			if _, err := pw.Write([]byte{0x1f}); err != nil {
				return
			}
		}
	}()
	req, _ := http.NewRequest("POST", url+distribution.Prefix+"/publish", pr)
	req.Header.Set("Authorization", "Bearer "+token)
	req.ContentLength = int64(total)
	status := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			status <- 0
			return
		}
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	var once sync.Once
	return status, func() { once.Do(func() { close(stop) }) }
}

// drippers starts n dripping publishes (one byte every interval) and waits
// until each has its spool file; they stop at the end of the test.
func drippers(t *testing.T, url, spool string, n int, interval time.Duration) []<-chan int {
	t.Helper()
	var statuses []<-chan int
	for range n {
		st, stop := drip(t, url, publishToken, 1<<20, interval)
		t.Cleanup(stop)
		statuses = append(statuses, st)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		entries, _ := os.ReadDir(spool)
		if len(entries) == n {
			return statuses
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d spool files, want %d", len(entries), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSlowUploadsHoldNoPublishSlot: four uploads
// dripping a byte a second held every publish slot, blocking every other
// publisher. Bodies are now received before a slot is taken, spooled to
// a file, and cut off below the minimum rate.
func TestSlowUploadsHoldNoPublishSlot(t *testing.T) {
	spool := t.TempDir()
	ts := newTestServer(t, Config{
		MaxConcurrentPublishes: 1, MaxConcurrentUploads: 8, SpoolDir: spool,
		MinUploadRate: 1 << 10, UploadGrace: 3 * time.Second,
	}, false)
	statuses := drippers(t, ts.URL, spool, 4, 50*time.Millisecond)
	start := time.Now()
	res, err := client(ts.URL, publishToken).Publish(context.Background(), pluginArchive(t, "prompt", "1.0.0", nil), "")
	if err != nil || !res.Created {
		t.Fatalf("a normal publish behind slow uploads: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("a normal publish waited %v behind slow uploads", d)
	}
	// The dripping uploads fall below 1 KiB/s once their grace is spent.
	for _, st := range statuses {
		select {
		case s := <-st:
			if s != http.StatusRequestTimeout && s != 0 {
				t.Fatalf("slow upload: status %d, want 408", s)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("a slow upload was never cut off")
		}
	}
	waitEmpty(t, spool)
}

// waitEmpty waits for the spool files of finished uploads to go.
func waitEmpty(t *testing.T, dir string) {
	t.Helper()
	for range 200 {
		if entries, _ := os.ReadDir(dir); len(entries) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	entries, _ := os.ReadDir(dir)
	t.Fatalf("%d spool files left", len(entries))
}

// TestUploadSlotsFull: beyond MaxConcurrentUploads, a publish is refused
// at once with 503 and Retry-After instead of queueing.
func TestUploadSlotsFull(t *testing.T) {
	spool := t.TempDir()
	ts := newTestServer(t, Config{MaxConcurrentUploads: 2, SpoolDir: spool, UploadGrace: time.Minute}, false)
	drippers(t, ts.URL, spool, 2, 20*time.Millisecond)
	start := time.Now()
	_, err := client(ts.URL, publishToken).Publish(context.Background(), pluginArchive(t, "late", "1.0.0", nil), "")
	var se *distribution.StatusError
	if st, code := statusOf(err); st != 503 || code != distribution.CodeBusy || !errors.As(err, &se) || se.RetryAfter <= 0 {
		t.Fatalf("publish with every upload slot taken: %d %s", st, code)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the 503 took %v", d)
	}
}

// TestSpoolSweptAtStart: spool files a crashed server left are removed by
// New; other files in the directory are not touched.
func TestSpoolSweptAtStart(t *testing.T) {
	spool := t.TempDir()
	os.WriteFile(spool+"/"+spoolPrefix+"123", []byte("half a body"), 0o600)
	os.WriteFile(spool+"/keep.txt", []byte("not ours"), 0o600)
	newTestServer(t, Config{SpoolDir: spool}, false)
	entries, _ := os.ReadDir(spool)
	if len(entries) != 1 || entries[0].Name() != "keep.txt" {
		t.Fatalf("spool after New: %v", entries)
	}
}

// TestUploadErrors: a body larger than announced, or cut short, leaves no
// spool file and no release.
func TestUploadErrors(t *testing.T) {
	spool := t.TempDir()
	ts := newTestServer(t, Config{SpoolDir: spool, Limits: limitsOf(4096)}, false)
	url := ts.URL + distribution.Prefix + "/publish"
	// Chunked, no Content-Length, over the limit.
	if st, code, _ := do(t, "POST", url, publishToken, "", io.NopCloser(strings.NewReader(strings.Repeat("x", 5000)))); st != 413 || code != distribution.CodeTooLarge {
		t.Fatalf("chunked oversized body: %d %s", st, code)
	}
	// Cut short: the client announces more than it sends.
	req, _ := http.NewRequest("POST", url, io.NopCloser(strings.NewReader("abc")))
	req.ContentLength = 100
	req.Header.Set("Authorization", "Bearer "+publishToken)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	waitEmpty(t, spool)
}

// TestPublishQueueFull: the publishes in flight, and so the spool files,
// are bounded too, whatever the upload slots.
func TestPublishQueueFull(t *testing.T) {
	spool := t.TempDir()
	ts := newTestServer(t, Config{MaxConcurrentUploads: 2, MaxQueuedPublishes: 2, SpoolDir: spool, UploadGrace: time.Minute}, false)
	drippers(t, ts.URL, spool, 2, 20*time.Millisecond)
	st, code, h := do(t, "POST", ts.URL+distribution.Prefix+"/publish", publishToken, "", strings.NewReader("x"))
	if st != 503 || code != distribution.CodeBusy || h.Get("Retry-After") == "" {
		t.Fatalf("publish with the queue full: %d %s", st, code)
	}
}

// TestSlowLegalUploadGetsItsAnswer: an upload above the minimum rate may
// outlast the server's write timeout, armed when the request began; its
// answer must still be written.
func TestSlowLegalUploadGetsItsAnswer(t *testing.T) {
	_, s := newTestServerWith(t, Config{MinUploadRate: 50, UploadGrace: 500 * time.Millisecond, SpoolDir: t.TempDir()}, false)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s, WriteTimeout: time.Second}
	go srv.Serve(ln)
	defer srv.Close()

	body := pluginArchive(t, "patient", "1.0.0", nil)
	pr, pw := io.Pipe()
	go func() {
		defer pw.Close()
		// Above the minimum of 50 bytes/s, for two seconds.
		step := len(body)/15 + 1
		for i := 0; i < len(body); i += step {
			time.Sleep(130 * time.Millisecond)
			pw.Write(body[i:min(i+step, len(body))])
		}
	}()
	req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+distribution.Prefix+"/publish", pr)
	req.ContentLength = int64(len(body))
	req.Header.Set("Authorization", "Bearer "+publishToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("a slow but legal upload lost its answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// heapBytes is the live heap after a collection, from runtime/metrics.
func heapBytes() uint64 {
	runtime.GC()
	s := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	rtmetrics.Read(s)
	return s[0].Value.Uint64()
}

// TestUploadIsSpooledNotHeld: a body being received lives in the spool
// file, not in memory: 16 MiB half-sent cost the heap far less than 16 MiB.
func TestUploadIsSpooledNotHeld(t *testing.T) {
	spool := t.TempDir()
	ts := newTestServer(t, Config{SpoolDir: spool}, false)
	const size = 16 << 20
	before := heapBytes()
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", ts.URL+distribution.Prefix+"/publish", pr)
	req.ContentLength = size
	req.Header.Set("Authorization", "Bearer "+publishToken)
	done := make(chan struct{})
	go func() {
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
		close(done)
	}()
	chunk := make([]byte, 1<<20)
	for range 12 {
		if _, err := pw.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	waitSpooled := time.Now().Add(10 * time.Second)
	for {
		entries, _ := os.ReadDir(spool)
		if len(entries) == 1 {
			if fi, err := entries[0].Info(); err == nil && fi.Size() >= 11<<20 {
				break
			}
		}
		if time.Now().After(waitSpooled) {
			t.Fatal("the body never reached the spool file")
		}
		time.Sleep(10 * time.Millisecond)
	}
	during := heapBytes()
	pw.CloseWithError(io.ErrUnexpectedEOF)
	<-done
	if grew := int64(during) - int64(before); grew > 4<<20 {
		t.Fatalf("12 MiB received grew the heap by %d bytes", grew)
	}
	waitEmpty(t, spool)
}
