package testservice

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The MCP server the process tests run, built once per test binary.
var mcpServer struct {
	once sync.Once
	dir  string
	path string
	err  error
	out  []byte
}

// MCPServer returns the path of mcprun's test MCP server
// (mcprun/internal/testserver, built with the official Go SDK), built the
// first time a test of this binary asks. TestMain calls Cleanup to remove
// it.
func MCPServer(t testing.TB) string {
	t.Helper()
	s := &mcpServer
	s.once.Do(func() {
		if s.dir, s.err = os.MkdirTemp("", "plugkit-testserver-"); s.err != nil {
			return
		}
		s.path = filepath.Join(s.dir, "testserver")
		// A plain build even under -race: the server is a fixture, and
		// linking it without the race runtime is much faster.
		build := exec.Command("go", "build", "-o", s.path, "github.com/plugkit/plugkit/mcprun/internal/testserver")
		s.out, s.err = build.CombinedOutput()
	})
	if s.err != nil {
		t.Fatalf("building the test MCP server: %v\n%s", s.err, s.out)
	}
	return s.path
}

// Cleanup removes what MCPServer built. Call it from TestMain after the
// tests have run.
func Cleanup() {
	if mcpServer.dir != "" {
		os.RemoveAll(mcpServer.dir)
	}
}

// Alive reports whether pid is a live process, from /proc: a zombie (dead,
// not reaped yet, as under a PID 1 that never reaps) counts as dead. Where
// /proc does not exist, every process looks dead, so tests that use it are
// Linux tests.
func Alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
