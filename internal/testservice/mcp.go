package testservice

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/internal/testbin"
)

// MCPServer returns the path of mcprun's test MCP server
// (mcprun/internal/testserver, built with the official Go SDK), built the
// first time a test of this binary asks (testbin.Build; the package's
// TestMain is testbin.Main, which removes it).
func MCPServer(t testing.TB) string {
	t.Helper()
	return testbin.Build(t, "github.com/plugkit/plugkit/mcprun/internal/testserver")
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
