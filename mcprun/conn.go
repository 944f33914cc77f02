package mcprun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/plugkit/plugkit/agentplugin"
)

// Conn is one server of a plugin after an attempt to start it: the outcome
// (ready, skipped, failed), the MCP session while it is ready, and, should
// the server exit or its connection close later, how it ended. A host that
// runs servers for a long time watches Done and starts a new Conn.
type Conn struct {
	mu      sync.Mutex
	status  ServerStatus
	session *mcp.ClientSession
	proc    *stdioProcess // nil for remote servers
	cancel  context.CancelFunc

	grace     time.Duration
	subreaper bool
	done      chan struct{} // closed when a ready session has ended
	closing   atomic.Bool
	closeOnce sync.Once
	closeErr  error
	endOnce   sync.Once
}

// becomeSubreaper makes this process a subreaper once.
var becomeSubreaper sync.Once

// Connect starts one server of pkg (plan, prepare, launch or dial, MCP
// handshake) and returns when it is ready, skipped or failed; see
// Conn.Status. ctx bounds starting only, as for Start. Close the Conn
// whatever its status.
func Connect(ctx context.Context, pkg *agentplugin.Package, srv agentplugin.Server, opts StartOptions) *Conn {
	opts.defaults()
	c := &Conn{status: ServerStatus{ID: srv.ID, Name: srv.Name, Type: srv.Type},
		grace: opts.ShutdownTimeout, subreaper: opts.Subreaper, done: make(chan struct{})}
	if opts.Subreaper {
		// Best effort: on systems without subreapers Close still ends
		// each server's group (see StartOptions.Subreaper).
		becomeSubreaper.Do(func() { enableSubreaper() })
	}
	begin := time.Now()
	c.start(ctx, pkg, srv, &opts)
	c.status.Elapsed = time.Since(begin)
	if c.session == nil {
		close(c.done)
	} else {
		go c.watch()
	}
	return c
}

// start plans, prepares and connects the server, recording the outcome.
func (c *Conn) start(ctx context.Context, pkg *agentplugin.Package, srv agentplugin.Server, o *StartOptions) {
	if pkg == nil {
		c.fail(StatusFailed, errors.New("mcprun: nil package"))
		return
	}
	if o.Transports != nil && !slices.Contains(o.Transports, srv.Type) {
		c.fail(StatusSkipped, fmt.Errorf("server %s: type %q: %w", srv.ID, srv.Type, ErrUnsupportedTransport))
		return
	}
	plan, err := Plan(pkg, srv, o.PlanOptions)
	if err == nil {
		err = plan.Prepare()
	}
	if err != nil {
		c.fail(statusOf(err), err)
		return
	}
	var tr mcp.Transport
	switch plan.Type {
	case agentplugin.Stdio:
		c.proc = newStdioProcess(plan, o.StderrTail)
		tr = c.proc
	case agentplugin.StreamableHTTP:
		tr = &mcp.StreamableClientTransport{Endpoint: plan.URL, HTTPClient: plan.Client}
	case agentplugin.SSE:
		tr = &mcp.SSEClientTransport{Endpoint: plan.URL, HTTPClient: plan.Client}
	}
	session, err := c.connect(ctx, tr, o)
	if err != nil && plan.Client != nil {
		err = explain(err, plan.Client)
	}
	if err != nil && c.proc != nil {
		err = c.proc.explain(err)
	}
	if err != nil {
		c.fail(StatusFailed, fmt.Errorf("server %s: %w", srv.ID, err))
		return
	}
	c.session = session
	c.status.Status = StatusReady
}

// statusOf maps a planning error to section 7.2.2: an invalid entry is
// skipped, and so is a stdio server when the host gave no PLUGIN_DATA;
// anything else (a missing program, an unwritable data directory) is a
// failure to start.
func statusOf(err error) Status {
	if errors.Is(err, ErrInvalidServer) || errors.Is(err, ErrNoDataDir) {
		return StatusSkipped
	}
	return StatusFailed
}

// fail records why the server is not ready and ends anything it started:
// its processes are killed at once, no grace for a failed server.
func (c *Conn) fail(s Status, err error) {
	// Err names the server, as a standalone error should; Reason sits next
	// to the ID already.
	reason := strings.TrimPrefix(err.Error(), "server "+c.status.ID+": ")
	c.status.Status, c.status.Err, c.status.Reason = s, err, reason
	if c.cancel != nil {
		c.cancel()
	}
	if c.proc != nil {
		c.proc.kill(c.proc.escapees())
		c.status.Stderr = c.proc.stderrTail()
	}
}

// watch waits for a ready server to end by itself (its process exits, or
// its connection closes) and records it as exited.
func (c *Conn) watch() {
	var reason string
	if c.proc != nil {
		<-c.proc.exited
		reason = c.proc.exitReason()
	} else {
		err := c.session.Wait()
		reason = "connection closed"
		if err != nil {
			reason += ": " + err.Error()
		}
	}
	if !c.closing.Load() {
		c.mu.Lock()
		c.status.Status, c.status.Reason = StatusExited, reason
		c.status.Err = fmt.Errorf("server %s: %w: %s", c.status.ID, ErrExited, reason)
		c.mu.Unlock()
		c.end()
		if c.proc != nil {
			tail := c.proc.stderrTail()
			c.mu.Lock()
			c.status.Stderr = tail
			c.mu.Unlock()
		}
	}
	close(c.done)
}

// end releases what a session holds once its server is gone: what is left
// of its process group, the session itself, and, with the subreaper
// option, the orphans it left behind.
func (c *Conn) end() {
	c.endOnce.Do(func() {
		if c.proc != nil {
			c.proc.kill(nil)
		}
		c.session.Close()
		if c.cancel != nil {
			c.cancel()
		}
		if c.subreaper {
			sweepOrphans()
		}
	})
}

// Status reports the server: ready, skipped, failed, or exited once a
// ready server has ended.
func (c *Conn) Status() ServerStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// Session is the MCP session of a ready server; nil when the server is
// not ready (never was, or has ended).
func (c *Conn) Session() *mcp.ClientSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.status.Status != StatusReady {
		return nil
	}
	return c.session
}

// Done is closed when the server is no longer ready: at once for a server
// that never was, else when it ends by itself or is closed.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Close ends the session and then every process of a stdio server: first
// its stdin is closed and it gets ShutdownTimeout to exit on its own, as
// the MCP stdio shutdown sequence asks; then SIGTERM; then its process
// group and every descendant that left the group are killed. Close is
// idempotent and reports the first error ending the session.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.closing.Store(true)
		c.closeErr = c.shutdown()
		<-c.done
	})
	return c.closeErr
}

// shutdown is Close's work.
func (c *Conn) shutdown() error {
	if c.session == nil {
		return nil // never ready: fail already cleaned up
	}
	var escaped []procID
	if c.proc != nil {
		// Found while the server still runs: once it exits, its escaped
		// descendants are orphans that nothing links to it.
		escaped = c.proc.escapees()
	}
	done := make(chan error, 1)
	go func() { done <- c.session.Close() }()
	if c.proc != nil {
		c.proc.stop(c.grace, escaped)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(c.grace):
		err = errors.New("session did not close")
	}
	c.end()
	if err != nil && !errors.Is(err, os.ErrClosed) && !errors.Is(err, mcp.ErrConnectionClosed) && c.proc == nil {
		return fmt.Errorf("server %s: closing: %w", c.status.ID, err)
	}
	return nil
}
