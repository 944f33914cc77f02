package mcprun

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/plugkit/plugkit/agentplugin"
)

// Status is what became of one server after Start.
type Status string

// The three outcomes of section 7.2.2 for a server.
const (
	// StatusReady: connected and the MCP handshake is complete.
	StatusReady Status = "ready"
	// StatusSkipped: invalid or of an unsupported transport; never started.
	StatusSkipped Status = "skipped"
	// StatusFailed: it could not be started, connected or initialized.
	StatusFailed Status = "failed"
)

// Defaults of StartOptions.
const (
	DefaultStartTimeout     = 10 * time.Second
	DefaultHandshakeTimeout = 30 * time.Second
	DefaultShutdownTimeout  = 2 * time.Second
	DefaultStderrTail       = 4096
)

// StartOptions control Start. The embedded PlanOptions apply to every
// server of the plugin.
type StartOptions struct {
	PlanOptions
	// Transports are the transports this run supports; nil means all
	// three. A server of another transport is skipped (section 7.2.2).
	Transports []agentplugin.Transport
	// StartTimeout bounds launching a process or opening a connection
	// (for legacy SSE, until the endpoint event arrives).
	StartTimeout time.Duration
	// HandshakeTimeout bounds the MCP initialization after that; for a
	// stdio server it includes the server's own start-up.
	HandshakeTimeout time.Duration
	// ShutdownTimeout is how long Close lets a stdio server exit on its
	// own after its stdin is closed, before killing its process group.
	ShutdownTimeout time.Duration
	// StderrTail is how many bytes of a stdio server's stderr are kept for
	// the report of a failure.
	StderrTail int
	// Client is the MCP client to connect with (handlers, capabilities);
	// nil is a plain client named "plugkit".
	Client *mcp.Client
}

func (o *StartOptions) defaults() {
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.StderrTail <= 0 {
		o.StderrTail = DefaultStderrTail
	}
	if o.Client == nil {
		o.Client = mcp.NewClient(&mcp.Implementation{Name: "plugkit", Version: "1.0.0"}, nil)
	}
}

// ServerStatus reports one server of a Runtime.
type ServerStatus struct {
	ID     string // PLUGIN/SERVER
	Name   string
	Type   agentplugin.Transport
	Status Status
	// Reason says why the server was skipped or failed; empty when ready.
	// Err is the same as an error, for errors.Is.
	Reason string
	Err    error
	// Stderr is the end of a failed stdio server's standard error, at
	// most StartOptions.StderrTail bytes.
	Stderr string
	// Elapsed is the time from Start to ready or failed.
	Elapsed time.Duration
}

// Runtime holds the live sessions of one plugin's servers.
type Runtime struct {
	servers []*running
	grace   time.Duration
	close   sync.Once
}

// running is one server's state inside a Runtime.
type running struct {
	status  ServerStatus
	session *mcp.ClientSession
	proc    *stdioProcess // nil for remote servers
	cancel  context.CancelFunc
}

// Start connects to every server of pkg concurrently and returns when each
// is ready, skipped or failed. One server's failure never affects another
// (section 7.2.2). The error is only for a problem with the plugin as a
// whole, such as a missing root. Close the Runtime even if no server is
// ready.
//
// ctx bounds starting only: canceling it fails the servers not yet ready,
// while the sessions of ready ones live until Close.
func Start(ctx context.Context, pkg *agentplugin.Package, opts StartOptions) (*Runtime, error) {
	if pkg == nil {
		return nil, errors.New("mcprun: nil package")
	}
	if _, err := resolveRoot(opts.Root); err != nil {
		return nil, err
	}
	opts.defaults()
	rt := &Runtime{grace: opts.ShutdownTimeout}
	begin := time.Now()
	var wg sync.WaitGroup
	for _, srv := range pkg.Servers {
		r := &running{status: ServerStatus{ID: srv.ID, Name: srv.Name, Type: srv.Type}}
		rt.servers = append(rt.servers, r)
		wg.Go(func() {
			r.start(ctx, pkg, srv, &opts)
			r.status.Elapsed = time.Since(begin)
		})
	}
	wg.Wait()
	return rt, nil
}

// start plans, prepares and connects one server, recording the outcome.
func (r *running) start(ctx context.Context, pkg *agentplugin.Package, srv agentplugin.Server, o *StartOptions) {
	if o.Transports != nil && !slices.Contains(o.Transports, srv.Type) {
		r.fail(StatusSkipped, fmt.Errorf("server %s: type %q: %w", srv.ID, srv.Type, ErrUnsupportedTransport))
		return
	}
	plan, err := Plan(pkg, srv, o.PlanOptions)
	if err == nil {
		err = plan.Prepare()
	}
	if err != nil {
		r.fail(statusOf(err), err)
		return
	}
	var tr mcp.Transport
	switch plan.Type {
	case agentplugin.Stdio:
		r.proc = newStdioProcess(plan, o.ShutdownTimeout, o.StderrTail)
		tr = r.proc
	case agentplugin.StreamableHTTP:
		tr = &mcp.StreamableClientTransport{Endpoint: plan.URL, HTTPClient: plan.Client}
	case agentplugin.SSE:
		tr = &mcp.SSEClientTransport{Endpoint: plan.URL, HTTPClient: plan.Client}
	}
	session, err := r.connect(ctx, tr, o)
	if err != nil && plan.Client != nil {
		err = explain(err, plan.Client)
	}
	if err != nil {
		r.fail(StatusFailed, fmt.Errorf("server %s: %w", srv.ID, err))
		return
	}
	r.session = session
	r.status.Status = StatusReady
}

// statusOf maps a planning error to section 7.2.2: an invalid entry is
// skipped, anything else (a missing program, an unwritable data home) is a
// failure to start.
func statusOf(err error) Status {
	if errors.Is(err, ErrInvalidServer) {
		return StatusSkipped
	}
	return StatusFailed
}

// fail records why the server is not ready and ends anything it started:
// its process group is killed at once, no grace for a failed server.
func (r *running) fail(s Status, err error) {
	// Err names the server, as a standalone error should; Reason sits next
	// to the ID already.
	reason := strings.TrimPrefix(err.Error(), "server "+r.status.ID+": ")
	r.status.Status, r.status.Err, r.status.Reason = s, err, reason
	if r.cancel != nil {
		r.cancel()
	}
	if r.proc != nil {
		r.proc.kill()
		r.status.Stderr = r.proc.stderrTail()
	}
}

// Servers reports every server of the plugin, in the package's order.
func (rt *Runtime) Servers() []ServerStatus {
	out := make([]ServerStatus, len(rt.servers))
	for i, r := range rt.servers {
		out[i] = r.status
	}
	return out
}

// Session returns the MCP session of the ready server with the given ID
// ("PLUGIN/SERVER"), or nil.
func (rt *Runtime) Session(id string) *mcp.ClientSession {
	for _, r := range rt.servers {
		if r.status.ID == id {
			return r.session
		}
	}
	return nil
}

// Close ends every session concurrently, then kills the whole process
// group of every stdio server, so that no process a server started
// survives. A stdio server first gets ShutdownTimeout to exit on its own
// after its stdin closes, as the MCP stdio shutdown sequence asks. Close
// is idempotent; it reports the first error ending a session.
func (rt *Runtime) Close() error {
	var first error
	rt.close.Do(func() {
		errs := make([]error, len(rt.servers))
		var wg sync.WaitGroup
		for i, r := range rt.servers {
			wg.Go(func() { errs[i] = r.shutdown(rt.grace) })
		}
		wg.Wait()
		first = errors.Join(errs...)
	})
	return first
}

// shutdown ends one server's session and process group.
func (r *running) shutdown(grace time.Duration) error {
	if r.session == nil {
		return nil // never ready: fail already cleaned up
	}
	done := make(chan error, 1)
	go func() { done <- r.session.Close() }()
	var err error
	closed := false
	select {
	case err = <-done:
		closed = true
	case <-time.After(grace):
	}
	if r.proc != nil {
		// The leader may be reaped already; its children keep the group,
		// and with it the group id, alive until this kill.
		r.proc.kill()
	}
	if r.cancel != nil {
		r.cancel()
	}
	if !closed {
		// Killing the group ends the process the SDK is waiting for.
		select {
		case err = <-done:
		case <-time.After(grace):
			err = errors.New("session did not close")
		}
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		// A server that exits non-zero or dies by our signal once its
		// input is closed has still shut down.
		return nil
	}
	if err != nil {
		return fmt.Errorf("server %s: closing: %w", r.status.ID, err)
	}
	return nil
}
