package mcprun

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/internal/testbin"
	"github.com/plugkit/plugkit/internal/testservice"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		testServerBin = os.Getenv("MCPRUN_TEST_SERVER")
		os.Exit(runHelper(mode))
	}
	os.Exit(testbin.Main(m))
}

// testServerBin is set in the helper process (see runHelper), which runs
// no test to build the server with.
var testServerBin string

// serverBin is the test MCP server.
func serverBin(t testing.TB) string {
	if testServerBin != "" {
		return testServerBin
	}
	return testservice.MCPServer(t)
}

// newRoot makes an empty plugin root (what the plan needs is the
// directory; the loader's files do not matter to mcprun) and returns its
// resolved path.
func newRoot(t testing.TB) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "plugin")
	mustMkdir(t, root)
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// installServer puts the test server at rel inside root, as a regular
// executable file (a hard link when possible, to avoid copying megabytes).
func installServer(t testing.TB, root, rel string) {
	t.Helper()
	dst := filepath.Join(root, rel)
	mustMkdir(t, filepath.Dir(dst))
	if os.Link(serverBin(t), dst) == nil {
		return
	}
	src, err := os.Open(serverBin(t))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, src); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func mustMkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t testing.TB, path, content string, mode os.FileMode) {
	t.Helper()
	mustMkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t testing.TB, target, link string) {
	t.Helper()
	mustMkdir(t, filepath.Dir(link))
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// stdioServer is a stdio entry running the installed test server.
func stdioServer(plugin, name string) agentplugin.Server {
	return agentplugin.Server{ID: plugin + "/" + name, Name: name, Type: agentplugin.Stdio, Command: "./bin/server"}
}

// baseOptions plans with an empty base environment and a private data
// directory, so tests never touch the user's real data directory.
func baseOptions(t testing.TB, root string) PlanOptions {
	return PlanOptions{Root: root, DataDir: filepath.Join(t.TempDir(), "data", "p"), BaseEnv: []string{}}
}

// envMap turns KEY=VALUE entries into a map, failing on duplicates.
func envMap(t testing.TB, env []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := m[k]; dup {
			t.Errorf("env has %s twice", k)
		}
		m[k] = v
	}
	return m
}
