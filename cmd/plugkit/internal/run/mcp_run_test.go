package run

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/internal/testservice"
)

// testServerBin is mcprun's test MCP server, built once per test binary.
func testServerBin(t testing.TB) string { return testservice.MCPServer(t) }

// writeSmallPlugin writes plugin "demo" whose bin/run is a script that
// starts the test server: small to pack and install, unlike the server.
func writeSmallPlugin(t *testing.T, servers string) string {
	root := writeMCPPlugin(t, testServerBin(t), servers)
	os.Remove(filepath.Join(root, "bin", "server"))
	script := "#!/bin/sh\nexec '" + testServerBin(t) + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(root, "bin", "run"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestMCPListInterrupted: an interrupted mcp list exits
// 130 with the interrupted error document, and never reports a server that
// was ready as failed.
func TestMCPListInterrupted(t *testing.T) {
	root := writeMCPPlugin(t, testServerBin(t), `{
		"ready": {"type": "stdio", "command": "./bin/server"},
		"slow":  {"type": "stdio", "command": "./bin/server", "env": {"TESTSERVER_DELAY": "20s"}}}`)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Second, cancel)
	var stdout, stderr bytes.Buffer
	code := program().RunContext(ctx, factory.Quiet(&stdout, &stderr), []string{"mcp", "list", "--json", "--plugin-data", t.TempDir(), root})
	if code != command.ExitInterrupted {
		t.Errorf("exit %d, want 130; stderr %s", code, stderr.String())
	}
	var doc struct {
		Error struct{ Code string }
	}
	clitest.DecodeOne(t, stdout.String(), &doc)
	if doc.Error.Code != "interrupted" || strings.Contains(stdout.String(), `"failed"`) {
		t.Errorf("stdout %s, want only the interrupted error document", stdout.String())
	}
}

// TestMCPListBoundedAfterHandshake: a server that
// answers initialize but never tools/list, and one whose tools/list always
// has another page, are reported failed within the timeout, with the
// other servers listed.
func TestMCPListBoundedAfterHandshake(t *testing.T) {
	root := writeMCPPlugin(t, testServerBin(t), `{
		"good":    {"type": "stdio", "command": "./bin/server"},
		"hang":    {"type": "stdio", "command": "./bin/server", "env": {"TESTSERVER_LIST": "hang"}},
		"endless": {"type": "stdio", "command": "./bin/server", "env": {"TESTSERVER_LIST": "endless"}}}`)
	want := map[string]string{"good": "ready", "hang": "no answer within 3s", "endless": "more than 100 pages"}
	begin := time.Now()
	code, stdout, stderr := runCLI(t, "mcp", "list", "--json", "--timeout", "3s", "--plugin-data", t.TempDir(), root)
	if code != command.ExitFailed {
		t.Errorf("exit %d, want 1; stderr %s", code, stderr)
	}
	if d := time.Since(begin); d > 30*time.Second {
		t.Errorf("took %v with --timeout 3s", d)
	}
	var doc struct {
		Servers []struct{ Name, Status, Reason string }
	}
	clitest.DecodeOne(t, stdout, &doc)
	for _, s := range doc.Servers {
		if s.Name == "good" && s.Status != "ready" || s.Name != "good" && (s.Status != "failed" || !strings.Contains(s.Reason, want[s.Name])) {
			t.Errorf("%s: %s (%s), want %q", s.Name, s.Status, s.Reason, want[s.Name])
		}
	}
	// A call is bounded the same way.
	code, _, stderr = runCLI(t, "mcp", "call", "--timeout", "500ms", "--args", `{"ms": 30000}`, "--plugin-data", t.TempDir(), root, "good", "sleep")
	if code != command.ExitFailed || !strings.Contains(stderr, "no answer within 500ms") {
		t.Errorf("slow call: exit %d, stderr %s", code, stderr)
	}
	if code, _, _ := runCLI(t, "mcp", "list", "--timeout", "0s", root); code != command.ExitUsage {
		t.Errorf("--timeout 0s: exit %d, want 2", code)
	}
}

// TestMCPRunOptions covers what a run takes besides a directory: an
// archive, --plugin-data (and its hidden old name), --inherit-env,
// --config, and terminal-safe output of what servers send.
func TestMCPRunOptions(t *testing.T) {
	bin := testServerBin(t)
	t.Setenv("PLUGKIT_HOME", t.TempDir())
	root := writeMCPPlugin(t, bin, `{"good": {"type": "stdio", "command": "./bin/server", "env": {"TESTSERVER_EXTRA_TOOLS": "evil\u001b[2Jname"}}}`)

	t.Run("archive", func(t *testing.T) {
		small := writeSmallPlugin(t, `{"good": {"type": "stdio", "command": "./bin/run"}}`)
		archive := filepath.Join(t.TempDir(), "demo.tar.gz")
		if code, _, stderr := runCLI(t, "pack", small, "-o", archive); code != 0 {
			t.Fatalf("pack: %s", stderr)
		}
		code, stdout, stderr := runCLI(t, "mcp", "call", "--json", archive, "good", "info")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var doc struct {
			StructuredContent struct {
				Env []string
				Cwd string
			}
		}
		clitest.DecodeOne(t, stdout, &doc)
		env := strings.Join(doc.StructuredContent.Env, "\n")
		if !strings.Contains(env, "PLUGIN_DATA="+filepath.Join(os.Getenv("PLUGKIT_HOME"), "adhoc", "demo-")) {
			t.Errorf("PLUGIN_DATA of an archive run: %s", env)
		}
		if _, err := os.Stat(doc.StructuredContent.Cwd); !os.IsNotExist(err) {
			t.Errorf("the unpacked copy %s is still there (%v)", doc.StructuredContent.Cwd, err)
		}
		notArchive := filepath.Join(t.TempDir(), "demo.tar.gz")
		if err := os.WriteFile(notArchive, []byte("not gzip"), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, _ := runCLI(t, "mcp", "list", notArchive); code != command.ExitFailed {
			t.Errorf("a file that is no archive: exit %d, want 1", code)
		}
		// A plugin's file for its directory is a wrong argument.
		if code, _, stderr := runCLI(t, "mcp", "list", filepath.Join(root, "plugin.json")); code != command.ExitUsage || !strings.Contains(stderr, "give the plugin's directory "+root) {
			t.Errorf("plugin.json: exit %d, want 2: %s", code, stderr)
		}
	})

	t.Run("oci-layout", func(t *testing.T) {
		small := writeSmallPlugin(t, `{"good": {"type": "stdio", "command": "./bin/run"}}`)
		layout := filepath.Join(t.TempDir(), "layout")
		if code, _, stderr := runCLI(t, "push", small, "oci-layout:"+layout+":1.0"); code != 0 {
			t.Fatalf("push: %s", stderr)
		}
		code, stdout, stderr := runCLI(t, "mcp", "list", "--json", "oci-layout:"+layout+":1.0")
		if code != 0 || !strings.Contains(stdout, `"status": "ready"`) {
			t.Errorf("exit %d (%s): %s", code, stderr, stdout)
		}
	})

	t.Run("plugin-data-flag-and-hidden-alias", func(t *testing.T) {
		_, help, _ := runCLI(t, "mcp", "list", "--help")
		if !strings.Contains(help, "--plugin-data") || strings.Contains(help, "--data-dir") {
			t.Errorf("help must show --plugin-data and hide --data-dir:\n%s", help)
		}
		for _, flag := range []string{"--plugin-data", "--data-dir"} {
			data := filepath.Join(t.TempDir(), "pd")
			code, _, stderr := runCLI(t, "mcp", "call", flag, data, "--args", `{"name": "f", "content": "x"}`, root, "good", "write")
			if _, err := os.Stat(filepath.Join(data, "f")); code != 0 || err != nil {
				t.Errorf("%s: exit %d (%s), file %v", flag, code, stderr, err)
			}
		}
	})

	t.Run("inherit-env", func(t *testing.T) {
		t.Setenv("PLUGKIT_TEST_SECRET", "s3cr3t")
		t.Setenv("PLUGKIT_TEST_WANTED", "yes")
		code, stdout, stderr := runCLI(t, "mcp", "call", "--json", "--inherit-env", "PLUGKIT_TEST_WANTED", root, "good", "info")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.Contains(stdout, "PLUGKIT_TEST_WANTED=yes") || strings.Contains(stdout, "s3cr3t") {
			t.Errorf("server environment: %s", stdout)
		}
		if code, _, _ := runCLI(t, "mcp", "call", "--inherit-env", "A=B", root, "good", "info"); code != command.ExitUsage {
			t.Errorf("--inherit-env A=B: exit %d, want 2", code)
		}
	})

	t.Run("config", func(t *testing.T) {
		cfg := filepath.Join(t.TempDir(), "host.json")
		os.WriteFile(cfg, []byte(`{"servers": {"demo/good": {"env": {"API_KEY": {"env": "PLUGKIT_TEST_KEY"}}}}}`), 0o600)
		t.Setenv("PLUGKIT_TEST_KEY", "k-161803")
		code, stdout, stderr := runCLI(t, "mcp", "call", "--json", "--config", cfg, root, "good", "info")
		if code != 0 || !strings.Contains(stdout, "API_KEY=k-161803") {
			t.Errorf("exit %d (%s): %s", code, stderr, stdout)
		}
		// The home's host.json is the default.
		os.WriteFile(filepath.Join(os.Getenv("PLUGKIT_HOME"), "host.json"), []byte(`{"servers": {"demo/good": {"env": {"FROM_HOME": "1"}}}}`), 0o600)
		if _, stdout, _ := runCLI(t, "mcp", "call", "--json", root, "good", "info"); !strings.Contains(stdout, "FROM_HOME=1") {
			t.Errorf("HOME/host.json not used: %s", stdout)
		}
		os.Remove(filepath.Join(os.Getenv("PLUGKIT_HOME"), "host.json"))
		os.WriteFile(cfg, []byte(`{"servers": {"demo/good": {"env": {"API_KEY": {"env": "PLUGKIT_TEST_UNSET"}}}}}`), 0o600)
		code, _, stderr = runCLI(t, "mcp", "list", "--config", cfg, root)
		if code != command.ExitFailed || !strings.Contains(stderr, "PLUGKIT_TEST_UNSET is not set") {
			t.Errorf("unset variable: exit %d, %s", code, stderr)
		}
	})

	t.Run("terminal-safe", func(t *testing.T) {
		code, stdout, _ := runCLI(t, "mcp", "list", root)
		if code != 0 || strings.Contains(stdout, "\x1b") || !strings.Contains(stdout, `evil\x1b[2Jname`) {
			t.Errorf("exit %d, text output %q", code, stdout)
		}
		_, stdout, _ = runCLI(t, "mcp", "list", "--json", root)
		if !strings.Contains(stdout, `evil\u001b[2Jname`) {
			t.Errorf("--json must stay exact: %s", stdout)
		}
	})
}

// TestMCPInstalledPlugin: mcp list and call take an installed plugin's
// name with --home, run it from its store tree with its data directory,
// and refuse a tree modified since it was installed.
func TestMCPInstalledPlugin(t *testing.T) {
	home := t.TempDir()
	root := writeSmallPlugin(t, `{"good": {"type": "stdio", "command": "./bin/run"}}`)
	if code, _, stderr := runCLI(t, "install", "--yes", "--home", home, root); code != 0 {
		t.Fatalf("install: %s", stderr)
	}
	code, stdout, stderr := runCLI(t, "mcp", "call", "--json", "--home", home, "demo", "good", "info")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		StructuredContent struct{ Env []string }
	}
	clitest.DecodeOne(t, stdout, &doc)
	env := strings.Join(doc.StructuredContent.Env, "\n") + "\n"
	if !strings.Contains(env, "PLUGIN_DATA="+filepath.Join(home, "data", "demo")+"\n") ||
		!strings.Contains(env, "PLUGIN_ROOT="+filepath.Join(home, "store", "sha256")) {
		t.Errorf("installed plugin's environment: %s", env)
	}
	if code, stdout, _ := runCLI(t, "mcp", "list", "--home", home, "demo"); code != 0 || !strings.Contains(stdout, "good") {
		t.Errorf("mcp list: exit %d\n%s", code, stdout)
	}

	// Tamper with the store tree: the run is refused, nothing starts.
	trees, _ := filepath.Glob(filepath.Join(home, "store", "sha256", "*", "mcp.json"))
	if len(trees) != 1 {
		t.Fatalf("store trees: %q", trees)
	}
	os.Chmod(filepath.Dir(trees[0]), 0o755)
	os.Chmod(trees[0], 0o644)
	if err := os.WriteFile(trees[0], []byte(`{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {}}`), 0o444); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "mcp", "call", "--home", home, "demo", "good", "info")
	if code != command.ExitFailed || !strings.Contains(stderr, "modified") {
		t.Errorf("modified tree: exit %d, %s", code, stderr)
	}
	if code, _, _ := runCLI(t, "mcp", "list", "--home", home, "nosuch"); code != command.ExitUsage {
		t.Errorf("a name that is not installed: exit %d, want 2", code)
	}
}
