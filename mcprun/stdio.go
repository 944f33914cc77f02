package mcprun

import (
	"context"
	"os"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioProcess is the transport for one stdio server: the SDK's
// CommandTransport over our exec.Cmd, which runs in its own process group
// and writes its stderr into a bounded tail.
type stdioProcess struct {
	cmd    *exec.Cmd
	grace  time.Duration
	stderr *tail
}

func newStdioProcess(p *LaunchPlan, grace time.Duration, tailBytes int) *stdioProcess {
	return &stdioProcess{cmd: p.Cmd(), grace: grace, stderr: newTail(tailBytes)}
}

// Connect starts the process. Its stderr is an os.Pipe we read ourselves
// rather than an io.Writer handed to exec: with a Writer, exec.Cmd.Wait
// (called by the SDK on close) waits until every process holding the pipe
// has exited, so a grandchild the server left behind would hang Close.
func (s *stdioProcess) Connect(ctx context.Context) (mcp.Connection, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	s.cmd.Stderr = w
	ct := &mcp.CommandTransport{Command: s.cmd, TerminateDuration: s.grace}
	conn, err := ct.Connect(ctx)
	w.Close() // the child has its copy; ours would keep the pipe open forever
	if err != nil {
		r.Close()
		close(s.stderr.done)
		return nil, err
	}
	go s.stderr.readFrom(r)
	return conn, nil
}

// pid is the server's process id, which is also its process group id; 0
// when it never started.
func (s *stdioProcess) pid() int {
	if s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// kill ends the server's whole process group at once.
func (s *stdioProcess) kill() {
	if pid := s.pid(); pid > 0 {
		killProcessGroup(pid)
	}
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
