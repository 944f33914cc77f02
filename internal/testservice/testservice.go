// Package testservice starts the real services that tests talk to — a CNCF
// distribution registry, PostgreSQL — on 127.0.0.1, each in a temporary
// directory, stopped when the test ends.
//
// A service whose program is not installed skips the test with a message
// that says how to install it, except when PLUGKIT_TEST_REQUIRE_SERVICES=1
// (set by .ci/run, which installs every service): then it fails, so that a
// skipped test is never counted as passing in CI.
package testservice

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// RequireEnv is the environment variable that turns a missing service into
// a test failure instead of a skip.
const RequireEnv = "PLUGKIT_TEST_REQUIRE_SERVICES"

// Binary returns the path of the program name, looked up in PATH and then
// in the Go bin directory (where `go install` puts oras and versitygw). When
// it is missing, the test skips (or fails under RequireEnv) with hint, which
// says how to install it.
func Binary(t testing.TB, name, hint string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range goBinDirs() {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	msg := fmt.Sprintf("%s is not installed (%s); .ci/run installs it", name, hint)
	if os.Getenv(RequireEnv) == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// goBinDirs are where `go install` writes programs.
func goBinDirs() []string {
	var dirs []string
	if d := os.Getenv("GOBIN"); d != "" {
		dirs = append(dirs, d)
	}
	if gp := os.Getenv("GOPATH"); gp != "" {
		for _, p := range filepath.SplitList(gp) {
			dirs = append(dirs, filepath.Join(p, "bin"))
		}
	} else if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "go", "bin"))
	}
	return dirs
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
// Services that take their port on the command line need one; a service
// that loses the race fails to start, and Start tries again.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Process is a service started for a test.
type Process struct {
	Cmd *exec.Cmd
	// Log holds what the service wrote to stdout and stderr, for failure
	// messages.
	Log *os.File
	// exited holds the result of the one cmd.Wait, put back by whoever
	// takes it.
	exited chan error
}

// Wait waits for the process to exit (Start's own goroutine reaps it)
// and returns what cmd.Wait returned.
func (p *Process) Wait() error {
	err := <-p.exited
	p.exited <- err
	return err
}

// Start runs cmd, waits until ready reports nil (polled every 20 ms, up to
// timeout) and stops the process when the test ends. A process that exits
// or never becomes ready fails the test with its log.
func Start(t testing.TB, cmd *exec.Cmd, timeout time.Duration, ready func() error) *Process {
	t.Helper()
	logf, err := os.CreateTemp(t.TempDir(), "service-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	p := &Process{Cmd: cmd, Log: logf, exited: exited}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
		}
		logf.Close()
	})
	deadline := time.Now().Add(timeout)
	for {
		err := ready()
		if err == nil {
			return p
		}
		select {
		case werr := <-exited:
			exited <- werr
			t.Fatalf("%s exited before it was ready (%v):\n%s", filepath.Base(cmd.Path), werr, p.LogText())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after %v: %v\n%s", filepath.Base(cmd.Path), timeout, err, p.LogText())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// LogText is what the service has logged so far (at most 64 KiB).
func (p *Process) LogText() string {
	b, err := os.ReadFile(p.Log.Name())
	if err != nil {
		return err.Error()
	}
	if len(b) > 64<<10 {
		b = b[len(b)-64<<10:]
	}
	return string(b)
}

// httpReady returns a readiness check that GETs url and wants status.
func httpReady(url string, status int) func() error {
	c := &http.Client{Timeout: time.Second}
	return func() error {
		resp, err := c.Get(url)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != status {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return nil
	}
}

// env is the test process's environment without the variables named.
func env(drop ...string) []string {
	var out []string
next:
	for _, kv := range os.Environ() {
		for _, d := range drop {
			if strings.HasPrefix(kv, d+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// servingPrefix starts the line plugkit serve prints once it listens.
const servingPrefix = "plugkit serve: listening on "

// StartServe starts cmd, a `plugkit serve` command on a free port, as
// Start does, and returns it with the URL it prints once listening.
func StartServe(t testing.TB, cmd *exec.Cmd) (*Process, string) {
	t.Helper()
	var url string
	p := Start(t, cmd, 30*time.Second, func() error {
		// Start gives the command its log file as stdout.
		b, err := os.ReadFile(cmd.Stdout.(*os.File).Name())
		if err != nil {
			return err
		}
		_, rest, ok := strings.Cut(string(b), servingPrefix)
		if i := strings.IndexByte(rest, '\n'); ok && i >= 0 {
			url = rest[:i]
			return nil
		}
		return errors.New("not listening yet")
	})
	return p, url
}
