package mcprun

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioProcess is the transport for one stdio server and the owner of its
// process: mcprun starts it, waits for it and ends it, so that its exit is
// known the moment it happens and every process it started can be found.
// The server runs in a process group of its own (and, on Linux, dies with
// its parent); its stderr goes into a bounded tail.
type stdioProcess struct {
	cmd    *exec.Cmd
	stderr *tail
	stdin  *os.File // our end of the server's stdin
	stdout *os.File // our end of the server's stdout
	pipe   *rawPipe // stdin and stdout as the SDK and Conn.Call use them

	exited chan struct{} // closed once the process has been waited for
	state  *os.ProcessState
	err    error // from Wait, when it failed to wait at all
	once   sync.Once
}

func newStdioProcess(p *LaunchPlan, tailBytes int) *stdioProcess {
	return &stdioProcess{cmd: p.Cmd(), stderr: newTail(tailBytes), exited: make(chan struct{})}
}

// Connect starts the process on three os.Pipes. With *os.File streams
// exec.Cmd.Wait does not wait for pipe copies, so a grandchild that keeps
// the server's stdout or stderr open cannot hold up the end of the server.
func (s *stdioProcess) Connect(ctx context.Context) (mcp.Connection, error) {
	var ends []*os.File // the child's ends, closed here once it has them
	defer func() {
		for _, f := range ends {
			f.Close()
		}
	}()
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		for _, f := range []*os.File{inR, inW, outR, outW} {
			f.Close()
		}
		return nil, err
	}
	ends = []*os.File{inR, outW, errW}
	s.cmd.Stdin, s.cmd.Stdout, s.cmd.Stderr = inR, outW, errW
	if err := startTracked(s.cmd); err != nil {
		for _, f := range []*os.File{inW, outR, errR} {
			f.Close()
		}
		close(s.stderr.done)
		close(s.exited)
		return nil, err
	}
	s.stdin, s.stdout = inW, outR
	go s.stderr.readFrom(errR)
	go s.wait()
	// The SDK closes the connection by closing its reader and writer: the
	// writer is stdin, which is how a stdio server is asked to stop; the
	// reader must stay open until the server is gone (closing it first
	// would kill the server with SIGPIPE mid-answer), so wait closes it.
	s.pipe = newRawPipe(outR, inW)
	t := &mcp.IOTransport{Reader: io.NopCloser(s.pipe), Writer: s.pipe}
	return t.Connect(ctx)
}

// wait reaps the server and records how it ended.
func (s *stdioProcess) wait() {
	err := s.cmd.Wait()
	s.state = s.cmd.ProcessState
	if s.state == nil {
		s.err = err
	}
	untrack(s.cmd.Process.Pid)
	s.stdout.Close() // unblocks the SDK's reader, see Connect
	close(s.exited)
}

// pid is the server's process id, which is also its process group id; 0
// when it never started.
func (s *stdioProcess) pid() int {
	if s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// exitReason says how the server ended, once exited is closed.
func (s *stdioProcess) exitReason() string {
	if s.state == nil {
		if s.err != nil {
			return s.err.Error()
		}
		return "ended"
	}
	return s.state.String() // "exit status 3", "signal: killed"
}

// explain adds how the process ended to a failed start, when it ended by
// itself: "connection closed" alone hides a crash.
func (s *stdioProcess) explain(err error) error {
	if s.pid() == 0 {
		return err
	}
	select {
	case <-s.exited:
	case <-time.After(100 * time.Millisecond):
		return err // still running: the handshake itself failed
	}
	return fmt.Errorf("process ended (%s) before the MCP handshake completed: %w", s.exitReason(), err)
}

// stop ends the server the way the MCP stdio transport asks: its stdin is
// closed, it gets grace to exit, then SIGTERM and half that again, then
// its process group and every process it started (escaped, found by
// escapees while it still ran) are killed.
func (s *stdioProcess) stop(grace time.Duration, escaped []procID) {
	if s.pid() == 0 {
		return
	}
	s.stdin.Close()
	select {
	case <-s.exited:
	case <-time.After(grace):
		signalGroup(s.pid(), syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(grace / 2):
		}
	}
	s.kill(escaped)
}

// kill ends the server's process group and the given escaped descendants
// at once, then waits (boundedly) for the server to be reaped.
func (s *stdioProcess) kill(escaped []procID) {
	s.once.Do(func() {
		if s.stdin != nil {
			s.stdin.Close()
		}
	})
	if pid := s.pid(); pid > 0 {
		signalGroup(pid, syscall.SIGKILL)
		killProcs(escaped)
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
		}
	}
}

// escapees freezes and returns the descendants of the server that left its
// process group (setsid or setpgid), which the group kill would miss. They
// are found while the server runs: once it exits they are orphans, and
// nothing links them to it any more.
func (s *stdioProcess) escapees() []procID {
	select {
	case <-s.exited:
		return nil
	default:
	}
	if pid := s.pid(); pid > 0 {
		return freezeEscapees(pid)
	}
	return nil
}

// stderrTail returns the end of the server's stderr, waiting briefly for
// the last bytes of a process that has just died to arrive.
func (s *stdioProcess) stderrTail() string {
	select {
	case <-s.stderr.done:
	case <-time.After(200 * time.Millisecond):
	}
	return s.stderr.String()
}
