package run

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
)

// TestMCPCommands runs "plugkit mcp list" and "plugkit mcp call" in-process
// against a real plugin directory whose stdio servers are the mcprun test
// server, built once here, and a Streamable HTTP server on 127.0.0.1.
func TestMCPCommands(t *testing.T) {
	bin := testServerBin(t)

	remote := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	mcp.AddTool(remote, &mcp.Tool{Name: "ping"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, struct{}{}, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return remote }, nil))
	defer hs.Close()

	root := writeMCPPlugin(t, bin, `{
		"good":   {"type": "stdio", "command": "./bin/server", "args": ["two words", ""]},
		"crash":  {"type": "stdio", "command": "./bin/server", "env": {"TESTSERVER_CRASH": "boom: no config"}},
		"escape": {"type": "stdio", "command": "./bin/server", "cwd": "./.."},
		"bad":    {"type": "stdio", "command": "./bin/server", "shell": true},
		"remote": {"type": "streamable-http", "url": "`+hs.URL+`/mcp", "headers": {"X-Tenant": "t"}}
	}`)
	okRoot := writeMCPPlugin(t, bin, `{"good": {"type": "stdio", "command": "./bin/server"}}`)

	t.Run("list-json", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "mcp", "list", "--json", "--plugin-data", t.TempDir(), root)
		if code != command.ExitFailed {
			t.Errorf("exit %d, want 1 (a server failed); stderr %s", code, stderr)
		}
		var doc struct {
			Plugin  string
			Servers []struct {
				ID, Name, Type, Status, Reason, Stderr string
				Tools                                  []string
			}
		}
		dec := json.NewDecoder(strings.NewReader(stdout))
		if err := dec.Decode(&doc); err != nil || dec.More() {
			t.Fatalf("stdout is not one JSON document (%v): %s", err, stdout)
		}
		want := map[string]string{"good": "ready", "crash": "failed", "escape": "skipped", "bad": "skipped", "remote": "ready"}
		if doc.Plugin != "demo" || len(doc.Servers) != len(want) {
			t.Fatalf("document %+v, want plugin demo with %d servers", doc, len(want))
		}
		for _, s := range doc.Servers {
			if s.Status != want[s.Name] || s.ID != "demo/"+s.Name {
				t.Errorf("%s: %s (%s), want %s", s.ID, s.Status, s.Reason, want[s.Name])
			}
			if s.Status != "ready" && s.Reason == "" {
				t.Errorf("%s: no reason", s.Name)
			}
			if s.Tools == nil {
				t.Errorf("%s: tools must be a list, even empty", s.Name)
			}
			switch s.Name {
			case "good":
				if !slices.Equal(s.Tools, []string{"echo", "fail", "info", "sleep", "spawn", "write"}) {
					t.Errorf("good: tools %q", s.Tools)
				}
			case "remote":
				if !slices.Equal(s.Tools, []string{"ping"}) || s.Type != "streamable-http" {
					t.Errorf("remote: %+v", s)
				}
			case "crash":
				if !strings.Contains(s.Stderr, "boom: no config") {
					t.Errorf("crash: stderr %q, want its tail", s.Stderr)
				}
			}
		}
	})

	t.Run("list-transports-and-text", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "mcp", "list", "--transports", "stdio", "--plugin-data", t.TempDir(), okRoot)
		if code != command.ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.Contains(stdout, "plugin demo") || !strings.Contains(stdout, "good") || !strings.Contains(stdout, "echo, fail, info, sleep, spawn, write") {
			t.Errorf("output:\n%s", stdout)
		}
		// A transport the user left out is skipped without failing the run.
		remoteOnly := writeMCPPlugin(t, bin, `{"remote": {"type": "streamable-http", "url": "`+hs.URL+`/mcp"}}`)
		code, stdout, _ = runCLI(t, "mcp", "list", "--json", "--transports", "stdio", remoteOnly)
		if code != command.ExitOK || !strings.Contains(stdout, `"status": "skipped"`) {
			t.Errorf("exit %d, output %s; want 0 with remote skipped", code, stdout)
		}
		if code, _, _ := runCLI(t, "mcp", "list", "--transports", "carrier-pigeon", okRoot); code != command.ExitUsage {
			t.Errorf("unknown transport: exit %d, want 2", code)
		}
	})

	t.Run("call-default-args-is-an-object", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "mcp", "call", "--json", "--plugin-data", t.TempDir(), root, "good", "echo")
		if code != command.ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var doc struct {
			Server, Tool      string
			IsError           bool
			StructuredContent map[string]json.RawMessage
			Content           []map[string]any
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatalf("%v: %s", err, stdout)
		}
		if doc.Server != "demo/good" || doc.Tool != "echo" || doc.IsError || string(doc.StructuredContent["arguments"]) != "{}" {
			t.Errorf("document %s, want arguments {} sent", stdout)
		}
	})

	t.Run("call-args-and-hidden-data-dir-alias", func(t *testing.T) {
		data := filepath.Join(t.TempDir(), "pd")
		code, stdout, stderr := runCLI(t, "mcp", "call", "--json", "--data-dir", data,
			"--args", `{"name": "out file.txt", "content": "hello"}`, root, "demo/good", "write")
		if code != command.ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if b, err := os.ReadFile(filepath.Join(data, "out file.txt")); err != nil || string(b) != "hello" {
			t.Errorf("file in --data-dir: %q %v; output %s", b, err, stdout)
		}
		if fi, err := os.Stat(data); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("--data-dir created as %v (%v), want 0700", fi, err)
		}
	})

	t.Run("call-remote-text", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "mcp", "call", root, "remote", "ping")
		if code != command.ExitOK || strings.TrimSpace(stdout) != "pong" {
			t.Errorf("exit %d stdout %q stderr %q", code, stdout, stderr)
		}
	})

	t.Run("call-errors", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			code int
		}{
			{[]string{"--args", "[1]", root, "good", "echo"}, command.ExitUsage},
			{[]string{"--args", "null", root, "good", "echo"}, command.ExitUsage},
			{[]string{"--args", `"s"`, root, "good", "echo"}, command.ExitUsage},
			{[]string{"--args", "{", root, "good", "echo"}, command.ExitUsage},
			{[]string{"--args", "{} {}", root, "good", "echo"}, command.ExitUsage},
			{[]string{root, "nosuch", "echo"}, command.ExitUsage},
			{[]string{root, "good"}, command.ExitUsage},
			{[]string{root, "escape", "echo"}, command.ExitFailed},
			{[]string{root, "bad", "echo"}, command.ExitFailed},
			{[]string{"--plugin-data", t.TempDir(), root, "crash", "echo"}, command.ExitFailed},
			{[]string{"--plugin-data", t.TempDir(), root, "good", "no-such-tool"}, command.ExitFailed},
			{[]string{filepath.Join(t.TempDir(), "missing"), "good", "echo"}, command.ExitUsage},
		} {
			code, _, stderr := runCLI(t, append([]string{"mcp", "call"}, tc.args...)...)
			if code != tc.code {
				t.Errorf("mcp call %q: exit %d, want %d (%s)", tc.args, code, tc.code, stderr)
			}
		}
	})

	t.Run("help-has-examples", func(t *testing.T) {
		for _, verb := range []string{"list", "call"} {
			code, stdout, _ := runCLI(t, "mcp", verb, "--help")
			if code != command.ExitOK || !strings.Contains(stdout, "Examples:") {
				t.Errorf("mcp %s --help: exit %d\n%s", verb, code, stdout)
			}
		}
	})
}

// writeMCPPlugin writes a plugin "demo" with the given mcpServers object
// and the test server at bin/server.
func writeMCPPlugin(t *testing.T, serverBin, servers string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "demo")
	files := map[string]string{
		"plugin.json": `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "demo"}`,
		"mcp.json":    `{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": ` + servers + `}`,
	}
	for name, content := range files {
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(serverBin, filepath.Join(root, "bin", "server")); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestInitPlaceholderServerRuns: the stdio placeholder is a real MCP
// server: plugkit mcp list starts it, completes the handshake, and lists
// its (no) tools.
func TestInitPlaceholderServerRuns(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh: the placeholder server is a POSIX shell script")
	}
	dir := filepath.Join(t.TempDir(), "demo")
	if code, _, errOut := runCLI(t, "init", dir, "--mcp", "stdio"); code != 0 {
		t.Fatal(errOut)
	}
	code, out, errOut := runCLI(t, "mcp", "list", "--json", "--data-dir", t.TempDir(), dir)
	var r mcpListReport
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || len(r.Servers) != 1 || r.Servers[0].Status != "ready" {
		t.Fatalf("exit %d, %v\n%s%s", code, err, out, errOut)
	}
}

// TestMCPJSONFailureCodes: mcp's failures print one failure document with
// the documented code (the read, build and move verbs have theirs in
// TestJSONFailureCodes, package root).
func TestMCPJSONFailureCodes(t *testing.T) {
	rejected := clitest.WritePlugin(t, map[string]string{"plugin.json": `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "Bad"}`})
	good := clitest.WritePackPlugin(t, clitest.PackManifest)
	for _, c := range []struct {
		args  []string
		exit  int
		code  string
		diags int // minimum number of diagnostics
	}{
		{[]string{"mcp", "list", rejected}, command.ExitFailed, command.CodeRejected, 1},
		{[]string{"mcp", "call", good, "nosuch", "tool"}, command.ExitUsage, command.CodeUsage, 0},
	} {
		code, out, errOut := runCLI(t, append(c.args, "--json")...)
		var doc command.ErrorDoc
		clitest.DecodeOne(t, out, &doc)
		if code != c.exit || doc.Error.Code != c.code || doc.Error.Message == "" || len(doc.Diagnostics) < c.diags || !strings.HasPrefix(errOut, "plugkit: ") {
			t.Errorf("plugkit %s --json: exit %d, %+v; want exit %d, code %s, %d+ diagnostics\nstderr: %s",
				strings.Join(c.args, " "), code, doc, c.exit, c.code, c.diags, errOut)
		}
	}
}

// TestMCPGroup: mcp alone shows its help; an unknown subcommand of it
// exits 2 with a message, where cobra would print help and exit 0.
func TestMCPGroup(t *testing.T) {
	if code, out, errOut := runCLI(t, "mcp"); code != 0 || out == "" {
		t.Errorf("plugkit mcp: exit %d, stdout %d bytes, stderr %q", code, len(out), errOut)
	}
	if code, _, errOut := runCLI(t, "mcp", "nosuch"); code != command.ExitUsage || !strings.Contains(errOut, "plugkit:") {
		t.Errorf("plugkit mcp nosuch: exit %d, stderr %q; want 2 and a message", code, errOut)
	}
}
