package s3

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// A download from a plain-http endpoint, through the default transport,
// is a GET on a connection the store keeps itself (a directGetter's), so
// that its body can go from that connection to the client's without
// passing through the server's memory: a response body read from a
// *net.TCPConn is sent with splice(2) by net/http. Through the transport,
// the body is copied in and out of the process, for every byte.
const (
	// maxIdleDirect bounds the idle connections kept, as the default
	// transport's MaxIdleConnsPerHost does (see Open).
	maxIdleDirect = 64
	// directIdleTimeout is how long an idle connection is reused: past
	// it, the server may well have closed it.
	directIdleTimeout = 30 * time.Second
	// directHeaderBytes is the buffer the response's header is read
	// through; what of the body it holds is written from it.
	directHeaderBytes = 4 << 10
	// maxDirectHeader bounds a response's header, as the transport's
	// MaxResponseHeaderBytes does (there 10 MiB; S3's are a few hundred
	// bytes).
	maxDirectHeader = 1 << 20
)

// errDirectHeader is the error of a response header beyond maxDirectHeader.
var errDirectHeader = errors.New("s3: response header too large")

// directGetter sends GETs on its own connections to one host.
type directGetter struct {
	host string // the endpoint's host, as the URLs it is given name it
	addr string // host:port, dialled
	dial net.Dialer

	mu     sync.Mutex
	idle   []*directConn // most recently used last
	closed bool          // keeps no connection idle any more (close)
}

// directConn is a connection and the reader its responses are read
// through, from the connection itself with a budget while it reads a
// header.
type directConn struct {
	c      *net.TCPConn
	br     *bufio.Reader
	budget int64     // what the reader may still read of a header, or -1
	since  time.Time // when it went idle
}

// Read is what br reads from c.
func (dc *directConn) Read(p []byte) (int, error) {
	if dc.budget < 0 {
		return dc.c.Read(p)
	}
	if dc.budget == 0 {
		return 0, errDirectHeader
	}
	n, err := dc.c.Read(p[:min(int64(len(p)), dc.budget)])
	dc.budget -= int64(n)
	return n, err
}

// newDirectGetter returns the getter for endpoint, or nil when downloads
// from it cannot be spliced: over https (TLS is done in the process), or
// through a proxy (HTTP_PROXY and the like).
func newDirectGetter(endpoint *url.URL) *directGetter {
	if endpoint.Scheme != "http" {
		return nil
	}
	if p, err := http.ProxyFromEnvironment(&http.Request{URL: endpoint}); p != nil || err != nil {
		return nil
	}
	addr := endpoint.Host
	if endpoint.Port() == "" {
		addr = net.JoinHostPort(endpoint.Hostname(), "80")
	}
	return &directGetter{host: endpoint.Host, addr: addr, dial: net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}}
}

// get sends a GET of u (a presigned URL of g.host) for the bytes from
// offset, with a Range header when offset > 0, and returns the response's
// status and its body. A connection taken from the idle ones that fails
// before the answer (the server closed it meanwhile) is dropped and the
// GET sent again, on the next idle one or a new one: a GET can be sent
// again, and a new connection that fails ends it.
func (g *directGetter) get(ctx context.Context, u *url.URL, offset int64) (int, *directBody, error) {
	req := "GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUser-Agent: plugkit\r\n"
	if offset > 0 {
		req += "Range: bytes=" + strconv.FormatInt(offset, 10) + "-\r\n"
	}
	req += "\r\n"
	for {
		dc, reused, err := g.conn(ctx)
		if err != nil {
			return 0, nil, err
		}
		status, b, err := g.roundTrip(ctx, dc, req)
		if err != nil && reused && ctx.Err() == nil {
			continue // an idle connection the server had closed
		}
		return status, b, err
	}
}

// conn returns an idle connection that is young enough, or a new one.
func (g *directGetter) conn(ctx context.Context) (dc *directConn, reused bool, err error) {
	now := time.Now()
	g.mu.Lock()
	for len(g.idle) > 0 {
		dc = g.idle[len(g.idle)-1]
		g.idle = g.idle[:len(g.idle)-1]
		if now.Sub(dc.since) < directIdleTimeout {
			g.mu.Unlock()
			return dc, true, nil
		}
		dc.c.Close()
	}
	g.mu.Unlock()
	c, err := g.dial.DialContext(ctx, "tcp", g.addr)
	if err != nil {
		return nil, false, err
	}
	dc = &directConn{c: c.(*net.TCPConn)}
	dc.br = bufio.NewReaderSize(dc, directHeaderBytes)
	return dc, false, nil
}

// put keeps dc to be reused, unless enough are kept already or g is
// closed.
func (g *directGetter) put(dc *directConn) {
	dc.since = time.Now()
	g.mu.Lock()
	if !g.closed && len(g.idle) < maxIdleDirect {
		g.idle = append(g.idle, dc)
		dc = nil
	}
	g.mu.Unlock()
	if dc != nil {
		dc.c.Close()
	}
}

// close closes the idle connections, and those given back from now on:
// a GET after it still works, on a new connection of its own that is
// closed after it, so that nothing stays open once the store is closed.
func (g *directGetter) close() {
	g.mu.Lock()
	idle := g.idle
	g.idle, g.closed = nil, true
	g.mu.Unlock()
	for _, dc := range idle {
		dc.c.Close()
	}
}

// roundTrip sends req on dc and reads the response's header. The body
// returned holds dc until it is read to its end or closed; after an
// error, dc is closed.
func (g *directGetter) roundTrip(ctx context.Context, dc *directConn, req string) (int, *directBody, error) {
	// Cancelling ctx ends whatever dc is blocked on, now or while the
	// body is read.
	stop := context.AfterFunc(ctx, func() { dc.c.SetDeadline(time.Unix(1, 0)) })
	fail := func(err error) (int, *directBody, error) {
		stop()
		dc.c.Close()
		return 0, nil, err
	}
	if _, err := io.WriteString(dc.c, req); err != nil {
		return fail(err)
	}
	dc.budget = maxDirectHeader
	resp, err := http.ReadResponse(dc.br, &http.Request{Method: http.MethodGet})
	dc.budget = -1
	if err != nil {
		return fail(err)
	}
	if resp.ContentLength < 0 || len(resp.TransferEncoding) > 0 {
		return fail(errors.New("s3: a response without Content-Length"))
	}
	b := &directBody{g: g, dc: dc, left: resp.ContentLength, keep: !resp.Close, stop: stop}
	if b.left == 0 {
		b.release()
	}
	return resp.StatusCode, b, nil
}

// directBody is the body of a response on a directGetter's connection:
// left more bytes, read first from the connection's reader (which may
// hold some), then from the connection itself.
type directBody struct {
	g    *directGetter
	dc   *directConn // nil once released
	left int64
	keep bool        // whether the connection may carry another request
	stop func() bool // stops the context's hold on the connection
}

func (b *directBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, io.EOF
	}
	if b.dc == nil {
		return 0, net.ErrClosed
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	// With its buffer empty, the reader reads into p directly.
	n, err := b.dc.br.Read(p)
	b.done(int64(n))
	if err == io.EOF && b.left > 0 {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// sendTo writes the next n bytes of the body to w: those the reader holds,
// then the rest straight from the connection with io.Copy, which gives w
// (net/http's response, over TCP) the connection to splice from.
func (b *directBody) sendTo(w io.Writer, n int64) (int64, error) {
	n = min(n, b.left)
	if n <= 0 {
		return 0, nil
	}
	if b.dc == nil {
		return 0, net.ErrClosed
	}
	var k int
	if held := min(n, int64(b.dc.br.Buffered())); held > 0 {
		head, _ := b.dc.br.Peek(int(held))
		var err error
		k, err = w.Write(head)
		b.dc.br.Discard(k)
		b.done(int64(k))
		if err != nil || b.dc == nil {
			return int64(k), err
		}
	}
	src := &io.LimitedReader{R: b.dc.c, N: n - int64(k)}
	m, err := io.Copy(w, src)
	b.done(m)
	if err == nil && src.N > 0 {
		err = io.ErrUnexpectedEOF // the server sent less than it said
	}
	return int64(k) + m, err
}

// done counts n bytes read, and releases the connection after the last.
func (b *directBody) done(n int64) {
	b.left -= n
	if b.left == 0 && b.dc != nil {
		b.release()
	}
}

// release gives the connection back to the getter when it can carry
// another request, and closes it otherwise.
func (b *directBody) release() {
	dc := b.dc
	b.dc = nil
	// stop is false when the context has set the deadline already.
	if b.stop() && b.keep && dc.br.Buffered() == 0 && dc.c.SetDeadline(time.Time{}) == nil {
		b.g.put(dc)
		return
	}
	dc.c.Close()
}

// Close closes the connection when the body was not read to its end: the
// rest of it is still on the way.
func (b *directBody) Close() error {
	if b.dc == nil {
		return nil
	}
	b.stop()
	b.dc.c.Close()
	b.dc = nil
	return nil
}
