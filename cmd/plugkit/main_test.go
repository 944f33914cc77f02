package main

import (
	"os"
	"testing"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/root"
	"github.com/plugkit/plugkit/internal/testbin"
)

// TestMain removes the programs the tests built (the plugkit binaries, the
// MCP test server) once they are done.
func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }

// runCLI runs plugkit in process: every verb.
func runCLI(t testing.TB, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return clitest.Run(t, root.Program().Run, args...)
}

// mustRun runs plugkit in process and fails the test unless it exits
// 0.
func mustRun(t testing.TB, args ...string) string {
	t.Helper()
	return clitest.MustRun(t, root.Program().Run, args...)
}
