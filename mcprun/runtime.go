package mcprun

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/plugkit/plugkit/agentplugin"
)

// Status is what became of one server.
type Status string

// The three outcomes of section 7.2.2 for a server, and what a ready
// server becomes when it ends.
const (
	// StatusReady: connected and the MCP handshake is complete.
	StatusReady Status = "ready"
	// StatusSkipped: invalid, of an unsupported transport, or a stdio
	// server without a PLUGIN_DATA directory; never started.
	StatusSkipped Status = "skipped"
	// StatusFailed: it could not be started, connected or initialized.
	StatusFailed Status = "failed"
	// StatusExited: it was ready, then its process exited or its
	// connection closed without Close being called.
	StatusExited Status = "exited"
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
	// Subreaper makes this process a child subreaper (Linux; elsewhere it
	// does nothing): a process that a server orphans, a daemon it
	// double-forks or the children of a server that died, is reparented
	// to this process instead of init, and is ended when its server's
	// Conn ends or closes. This changes the whole process, and every
	// child it did not start through mcprun is taken for such an orphan
	// and killed, so enable it only in a program that starts no other
	// long-lived processes (plugkit's CLI does). Off by default.
	Subreaper bool
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

// ServerStatus reports one server.
type ServerStatus struct {
	ID     string // PLUGIN/SERVER
	Name   string
	Type   agentplugin.Transport
	Status Status
	// Reason says why the server was skipped, failed or exited; empty
	// when ready. Err is the same as an error, for errors.Is.
	Reason string
	Err    error
	// Stderr is the end of a failed or exited stdio server's standard
	// error, at most StartOptions.StderrTail bytes.
	Stderr string
	// Elapsed is the time from the start to ready or failed.
	Elapsed time.Duration
}

// Runtime holds the live sessions of one plugin's servers.
type Runtime struct {
	conns []*Conn
	close sync.Once
	err   error
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
	rt := &Runtime{conns: make([]*Conn, len(pkg.Servers))}
	var wg sync.WaitGroup
	for i, srv := range pkg.Servers {
		wg.Go(func() { rt.conns[i] = Connect(ctx, pkg, srv, opts) })
	}
	wg.Wait()
	return rt, nil
}

// Servers reports every server of the plugin, in the package's order.
func (rt *Runtime) Servers() []ServerStatus {
	out := make([]ServerStatus, len(rt.conns))
	for i, c := range rt.conns {
		out[i] = c.Status()
	}
	return out
}

// Session returns the MCP session of the ready server with the given ID
// ("PLUGIN/SERVER"), or nil.
func (rt *Runtime) Session(id string) *mcp.ClientSession {
	for _, c := range rt.conns {
		if c.status.ID == id {
			return c.Session()
		}
	}
	return nil
}

// Close closes every server concurrently (see Conn.Close), so that no
// process a server started survives. Close is idempotent; it reports the
// errors ending sessions.
func (rt *Runtime) Close() error {
	rt.close.Do(func() {
		errs := make([]error, len(rt.conns))
		var wg sync.WaitGroup
		for i, c := range rt.conns {
			wg.Go(func() { errs[i] = c.Close() })
		}
		wg.Wait()
		rt.err = errors.Join(errs...)
	})
	return rt.err
}
