package host

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/mcprun"
)

// StatusIdle is the status of a server the host has not started yet.
const StatusIdle mcprun.Status = "idle"

// ServerStatus reports one server of a host.
type ServerStatus struct {
	// ID, Name, Type, Status (idle, ready, skipped, failed or exited),
	// Reason, Err and Stderr are the server's as mcprun reports them.
	mcprun.ServerStatus
	// Plugin is the name of the server's plugin.
	Plugin string
	// Restarts counts the starts after the first successful one.
	Restarts int
	// LastExit says how the server's previous session ended, kept after it
	// is restarted so that a crash is never silently gone.
	LastExit string
	// RetryAt is when a failed or exited server may start again; zero when
	// the next request may start it.
	RetryAt time.Time
}

// server is one MCP server of a plugin: started on demand, restarted with
// backoff after a failure or an exit, and its lists cached per session.
type server struct {
	h      *Host
	plugin *plugin
	def    agentplugin.Server
	launch mcprun.StartOptions

	mu       sync.Mutex
	conn     *mcprun.Conn
	starting chan struct{} // closed when the start in progress ends
	closed   bool
	st       mcprun.ServerStatus // Status StatusIdle until the first start
	starts   int                 // successful starts
	failures int                 // consecutive failures and exits, for backoff
	retryAt  time.Time
	readyAt  time.Time
	lastExit string
	lists    [kindCount]listCache
}

// status reports the server.
func (s *server) status() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	if st.Status == "" {
		st = mcprun.ServerStatus{ID: s.def.ID, Name: s.def.Name, Type: s.def.Type, Status: StatusIdle}
	}
	out := ServerStatus{ServerStatus: st, Plugin: s.plugin.Package.Name, Restarts: max(s.starts-1, 0), LastExit: s.lastExit}
	if time.Now().Before(s.retryAt) && (st.Status == mcprun.StatusFailed || st.Status == mcprun.StatusExited) {
		out.RetryAt = s.retryAt
	}
	return out
}

// session returns the server's live session and the Conn it belongs to,
// starting the server first when it is idle, or when it failed or exited
// and its backoff has passed. A request waits for a start in progress (as
// long as its ctx allows) but starts a server at most once.
func (s *server) session(ctx context.Context) (*mcp.ClientSession, *mcprun.Conn, error) {
	waited := false
	s.mu.Lock()
	for {
		if s.closed {
			s.mu.Unlock()
			return nil, nil, fmt.Errorf("%w: server %s was removed", ErrUnavailable, s.def.ID)
		}
		switch s.st.Status {
		case mcprun.StatusReady:
			conn := s.conn
			s.mu.Unlock()
			if sess := conn.Session(); sess != nil {
				return sess, conn, nil
			}
			// It ended a moment ago; watch is recording it. This request
			// fails, the next one restarts it.
			return nil, nil, fmt.Errorf("%w: server %s has just exited", ErrUnavailable, s.def.ID)
		case mcprun.StatusSkipped:
			err := fmt.Errorf("%w: server %s is skipped: %s", ErrUnavailable, s.def.ID, s.st.Reason)
			s.mu.Unlock()
			return nil, nil, err
		case mcprun.StatusFailed, mcprun.StatusExited:
			if wait := time.Until(s.retryAt); (waited || wait > 0) && s.starting == nil {
				err := fmt.Errorf("%w: server %s %s: %s", ErrUnavailable, s.def.ID, s.st.Status, s.st.Reason)
				if wait > 0 {
					err = fmt.Errorf("%w; next start attempt in %v", err, wait.Round(time.Millisecond))
				}
				s.mu.Unlock()
				return nil, nil, err
			}
		}
		if s.starting == nil {
			s.starting = make(chan struct{})
			go s.start(s.starting, s.conn)
		}
		ch := s.starting
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		waited = true
		s.mu.Lock()
	}
}

// start starts the server once and records the outcome. It runs under the
// host's lifetime, not the request's: another request may be waiting for
// the same start, and Close cancels it.
func (s *server) start(done chan struct{}, old *mcprun.Conn) {
	if old != nil {
		old.Close() // what is left of a failed or exited start
	}
	conn := mcprun.Connect(s.h.life, s.plugin.Package, s.def, s.launch)
	st := conn.Status()
	log := s.h.opts.Logger.With("server", s.def.ID)

	s.mu.Lock()
	defer close(done)
	defer s.mu.Unlock()
	s.starting = nil
	if s.closed {
		go conn.Close()
		return
	}
	s.conn, s.st = conn, st
	switch st.Status {
	case mcprun.StatusReady:
		s.starts++
		s.readyAt = time.Now()
		if sess := conn.Session(); sess != nil {
			s.h.sessions.Store(sess, s)
		}
		go s.watch(conn)
		if s.starts > 1 {
			log.Info("server restarted", "restarts", s.starts-1, "after", s.lastExit)
		} else {
			log.Info("server started", "elapsed", st.Elapsed.Round(time.Millisecond))
		}
	case mcprun.StatusSkipped:
		log.Warn("server skipped", "reason", st.Reason)
	default:
		s.backoff()
		log.Error("server failed to start", "reason", st.Reason, "stderr", st.Stderr)
	}
}

// watch records the end of a ready session that was not closed by the
// host: the server is reported exited and restarts on the next request.
func (s *server) watch(conn *mcprun.Conn) {
	<-conn.Done()
	st := conn.Status()
	s.mu.Lock()
	if s.conn != conn || s.closed {
		s.mu.Unlock()
		return
	}
	s.st = st
	s.lastExit = st.Reason
	if time.Since(s.readyAt) >= s.h.opts.MaxBackoff {
		s.failures = 0 // it ran long enough: not a crash loop
	}
	s.backoff()
	s.mu.Unlock()
	s.forget()
	s.h.opts.Logger.With("server", s.def.ID).Error("server exited", "reason", st.Reason, "stderr", st.Stderr)
}

// backoff counts a failure and sets when the next start may happen: the
// first restart at once, then MinBackoff doubling up to MaxBackoff.
func (s *server) backoff() {
	s.failures++
	wait := time.Duration(0)
	if s.failures > 1 {
		wait = s.h.opts.MaxBackoff
		if shift := s.failures - 2; shift < 30 {
			wait = min(s.h.opts.MinBackoff<<shift, s.h.opts.MaxBackoff)
		}
	}
	s.retryAt = time.Now().Add(wait)
}

// forget drops the notification route of the server's session.
func (s *server) forget() {
	s.h.sessions.Range(func(k, v any) bool {
		if v == s {
			s.h.sessions.Delete(k)
		}
		return true
	})
}

// close ends the server for good, waiting for a start in progress.
func (s *server) close() error {
	s.mu.Lock()
	s.closed = true
	ch := s.starting
	s.mu.Unlock()
	if ch != nil {
		<-ch // start sees closed and closes what it started
	}
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn == nil {
		return nil
	}
	s.forget()
	return conn.Close()
}
