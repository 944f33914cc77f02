package s3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/internal/testservice"
	"github.com/plugkit/plugkit/registry/blobs"
)

// sendAll serves the blob over HTTP as the registry does, with SendTo
// (the bytes spliced from the store's connection), and returns what a
// client receives for the Range rng ("" for all of it).
func sendAll(t *testing.T, s *Store, digest, rng string) []byte {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, size, err := s.Open(r.Context(), digest)
		if err != nil {
			t.Errorf("open: %v", err)
			return
		}
		defer f.Close()
		off, n := int64(0), size
		if rng != "" {
			if off, err = strconv.ParseInt(rng, 10, 64); err != nil {
				t.Errorf("range %q", rng)
				return
			}
			f.Seek(off, io.SeekStart)
			n = size - off
		}
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		got, err := f.(blobs.Sender).SendTo(w, n)
		if err != nil || got != n {
			t.Errorf("SendTo: %d of %d bytes, %v", got, n, err)
		}
	}))
	defer ts.Close()
	resp, err := http.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDirectGet: from a plain-http endpoint, downloads read or sent
// (SendTo) on the store's own connections arrive whole, from any offset,
// and one connection serves them one after another.
func TestDirectGet(t *testing.T) {
	s, _, _ := open(t, "/d")
	if s.direct == nil {
		t.Fatal("no direct GETs from a plain-http endpoint")
	}
	data, digest := blob(7)
	data = bytes.Repeat(data, 100) // 800 KB: more than one read
	digest = archive.Digest(data)
	if err := s.Put(context.Background(), digest, data); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readAll(t, s, digest), data) {
		t.Fatal("read: bytes differ")
	}
	first := idleConns(s)
	if len(first) != 1 {
		t.Fatalf("%d idle connections after a download, want 1", len(first))
	}
	if got := sendAll(t, s, digest, ""); !bytes.Equal(got, data) {
		t.Fatalf("SendTo: %d bytes, want %d, or bytes differ", len(got), len(data))
	}
	if now := idleConns(s); len(now) != 1 || now[0] != first[0] {
		t.Fatalf("idle connections %v, want the first one, %v, reused", now, first)
	}
	// Open's GET from 0 is closed when the Range asks for another: its
	// connection goes, the ranged GET's stays.
	if got := sendAll(t, s, digest, "12345"); !bytes.Equal(got, data[12345:]) {
		t.Fatalf("SendTo from 12345: %d bytes, or bytes differ", len(got))
	}
	if now := idleConns(s); len(now) != 1 || now[0] == first[0] {
		t.Fatalf("idle connections %v after a ranged send, want one other than %v", now, first)
	}
	// A download stopped half-way closes its connection: the rest of the
	// body is still on its way.
	f, _, err := s.Open(context.Background(), digest)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(f, make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if now := idleConns(s); len(now) != 0 {
		t.Fatalf("%d idle connections after an abandoned download, want 0", len(now))
	}
}

func TestDirectGetterOnlyForPlainHTTP(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:7070":  "127.0.0.1:7070",
		"http://s3.internal":     "s3.internal:80",
		"http://[::1]":           "[::1]:80",
		"https://s3.example.com": "",
	} {
		u, _ := url.Parse(raw)
		got := ""
		if g := newDirectGetter(u); g != nil {
			got = g.addr
		}
		if got != want {
			t.Errorf("%s: direct GETs to %q, want %q", raw, got, want)
		}
	}
	s, _, _ := openWith(t, "/t", Options{CacheBytes: -1, Transport: http.DefaultTransport})
	if s.direct != nil {
		t.Error("direct GETs bypass the Transport the options give")
	}
}

// directServer is a plain HTTP server whose handler answers every GET,
// and a getter for it; conns counts the connections it accepted.
func directServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *directGetter, *url.URL, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	u, _ := url.Parse(ts.URL + "/object?X-Amz-Signature=x")
	return ts, newDirectGetter(u), u, &conns
}

// TestDirectGetStaleConnection: an idle connection the server has closed
// is replaced by a new one, and the GET succeeds; one the server said it
// closes is not kept.
func TestDirectGetStaleConnection(t *testing.T) {
	ts, g, u, conns := directServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("close") != "" {
			w.Header().Set("Connection", "close")
		}
		io.WriteString(w, "object bytes")
	})
	for i := range 2 {
		status, b, err := g.get(context.Background(), u, 0)
		if err != nil || status != 200 {
			t.Fatalf("GET %d: %d %v", i, status, err)
		}
		if got, err := io.ReadAll(b); err != nil || string(got) != "object bytes" {
			t.Fatalf("GET %d: %q %v", i, got, err)
		}
		ts.CloseClientConnections()
		time.Sleep(10 * time.Millisecond) // the close reaches the client's side
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2: the stale one replaced once", n)
	}
	closing := *u
	closing.RawQuery += "&close=1"
	_, b, err := g.get(context.Background(), &closing, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(b); err != nil || string(got) != "object bytes" {
		t.Fatalf("GET: %q %v", got, err)
	}
	if len(g.idle) != 0 {
		t.Error("a connection the server closes was kept")
	}
}

// TestDirectGetRefusals: a response of unknown length, or with a header
// beyond maxDirectHeader, is refused (the store then asks minio-go); a
// body shorter than its Content-Length ends in io.ErrUnexpectedEOF, read
// or sent, and its connection is not reused.
func TestDirectGetRefusals(t *testing.T) {
	_, g, u, _ := directServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("short") == "" && r.URL.Query().Get("big") == "" {
			w.(http.Flusher).Flush() // chunked
			io.WriteString(w, "no length")
			return
		}
		c, buf, _ := http.NewResponseController(w).Hijack()
		defer c.Close()
		if r.URL.Query().Get("big") != "" {
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n")
			for range 2 * maxDirectHeader / 1000 {
				buf.WriteString("X-Filler: " + strings.Repeat("a", 988) + "\r\n")
			}
			buf.WriteString("\r\nx")
			buf.Flush()
			return
		}
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
		buf.Write(make([]byte, 50000))
		buf.Flush()
	})
	if _, _, err := g.get(context.Background(), u, 0); err == nil {
		t.Fatal("a chunked response was taken")
	}
	big := *u
	big.RawQuery += "&big=1"
	if _, _, err := g.get(context.Background(), &big, 0); !errors.Is(err, errDirectHeader) {
		t.Fatalf("a header of 2 MiB: %v", err)
	}
	short := *u
	short.RawQuery += "&short=1"
	for _, how := range []string{"read", "sent"} {
		_, b, err := g.get(context.Background(), &short, 0)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		if how == "read" {
			n, err = io.Copy(io.Discard, b)
		} else {
			n, err = b.sendTo(io.Discard, 100000)
		}
		if !errors.Is(err, io.ErrUnexpectedEOF) || n != 50000 {
			t.Errorf("%s a short body: %d bytes, %v", how, n, err)
		}
		b.Close()
	}
	if len(g.idle) != 0 {
		t.Errorf("%d idle connections after broken bodies", len(g.idle))
	}
}

// TestDirectGetCancel: cancelling the download's context ends a send
// blocked on a server that stopped sending.
func TestDirectGetCancel(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	_, g, u, _ := directServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		w.Write(make([]byte, 1000))
		w.(http.Flusher).Flush()
		<-release
	})
	ctx, cancel := context.WithCancel(context.Background())
	_, b, err := g.get(ctx, u, 0)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(50*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() { _, err := b.sendTo(io.Discard, 100000); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a cancelled send succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the send went on after its context was cancelled")
	}
	b.Close()
	if len(g.idle) != 0 {
		t.Error("a cancelled download's connection was kept")
	}
}

// TestDirectSendToFailingWriter: a client that goes away stops the send
// with its error; the connection is closed, not reused.
func TestDirectSendToFailingWriter(t *testing.T) {
	_, g, u, _ := directServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "300000")
		w.Write(make([]byte, 300000))
	})
	_, b, err := g.get(context.Background(), u, 0)
	if err != nil {
		t.Fatal(err)
	}
	gone := errors.New("client gone")
	if _, err := b.sendTo(failingWriter{gone}, 300000); !errors.Is(err, gone) {
		t.Fatalf("send to a failing writer: %v", err)
	}
	b.Close()
	if len(g.idle) != 0 {
		t.Error("the connection of a failed send was kept")
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// idleConns lists the store's idle direct connections.
func idleConns(s *Store) []*directConn {
	s.direct.mu.Lock()
	defer s.direct.mu.Unlock()
	return append([]*directConn(nil), s.direct.idle...)
}

// TestClose: Close closes the idle connections at once; a download open
// at Close reads to its end, and its connection is then closed, as is that
// of a download after Close; Close twice is fine. The connections are
// counted on the server's side, by a proxy in front of versitygw.
func TestClose(t *testing.T) {
	srv := testservice.StartS3(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	p := proxyTo(t, srv.Endpoint)
	s, err := Open(context.Background(), "s3://"+srv.NewBucket(t), Options{CacheBytes: -1, Endpoint: "http://" + p.addr})
	if err != nil {
		t.Fatal(err)
	}
	data, digest := blob(8)
	data = bytes.Repeat(data, 100) // 800 KB: more than the socket buffers
	digest = archive.Digest(data)
	if err := s.Put(context.Background(), digest, data); err != nil {
		t.Fatal(err)
	}
	readAll(t, s, digest)
	f, _, err := s.Open(context.Background(), digest)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 1000)
	if _, err := io.ReadFull(f, head); err != nil {
		t.Fatal(err)
	}
	readAll(t, s, digest)
	if n := len(idleConns(s)); n != 1 {
		t.Fatalf("%d idle direct connections before Close, want 1", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	p.waitOpen(t, 1) // the open download's
	rest, err := io.ReadAll(f)
	if err != nil || !bytes.Equal(append(head, rest...), data) {
		t.Fatalf("the download open at Close: %d bytes, %v", len(head)+len(rest), err)
	}
	f.Close()
	p.waitOpen(t, 0)
	if !bytes.Equal(readAll(t, s, digest), data) {
		t.Fatal("a download after Close: bytes differ")
	}
	if n := len(idleConns(s)); n != 0 {
		t.Fatalf("%d idle direct connections after Close", n)
	}
	p.waitOpen(t, 0)
	if err := s.Close(); err != nil {
		t.Fatalf("Close twice: %v", err)
	}
}

// tcpProxy forwards the connections made to addr to another address,
// and counts those open.
type tcpProxy struct {
	addr string
	open atomic.Int32
}

func proxyTo(t *testing.T, to string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p := &tcpProxy{addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.open.Add(1)
			go p.forward(c, to)
		}
	}()
	return p
}

// forward copies c to a new connection to addr and back, until either
// side closes.
func (p *tcpProxy) forward(c net.Conn, addr string) {
	defer p.open.Add(-1)
	defer c.Close()
	u, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer u.Close()
	go func() {
		io.Copy(c, u)
		c.Close()
	}()
	io.Copy(u, c)
}

// waitOpen waits, a few seconds at most, for want connections to be open.
func (p *tcpProxy) waitOpen(t *testing.T, want int32) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); p.open.Load() != want; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%d connections open, want %d", p.open.Load(), want)
		}
	}
}
