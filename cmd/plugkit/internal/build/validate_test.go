package build

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
)

// plugkit runs the CLI in-process and returns its exit code and output;
// it is runCLI under the name most tests use.
func plugkit(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCLI(t, args...)
}

const testManifest = `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "demo", "version": "0.1.0"}`

func TestValidateExample(t *testing.T) {
	code, out, errOut := plugkit(t, "validate", "../../../../examples/release-notes")
	if code != 0 || !strings.Contains(out, "release-notes 1.2.0: valid: 2 skills, 2 MCP servers") || errOut != "" {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
}

func TestValidateJSON(t *testing.T) {
	dir := clitest.WritePlugin(t, map[string]string{
		"plugin.json":       testManifest,
		"skills/a/SKILL.md": "---\nname: a\ndescription: A skill.\n---\n",
		"skills/b/SKILL.md": "---\nname: other\ndescription: B.\n---\n",
		"mcp.json": `{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {
  "x": {"type": "stdio", "command": "node"},
  "y": {"type": "stdio", "command": "node", "cwd": "./.."}}}`,
		"com.example.client/x": "x",
	})
	code, out, _ := plugkit(t, "validate", "--json", dir)
	if code != 1 {
		t.Errorf("exit %d, want 1 for an error diagnostic", code)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, out)
	}
	want := `{"path":"` + dir + `","specVersion":"1.0.0","loaded":true,"plugin":{"name":"demo","version":"0.1.0"},` +
		`"skills":[{"id":"demo/a","name":"a","path":"skills/a/SKILL.md"}],"mcp":"configured",` +
		`"mcpServers":[{"id":"demo/x","name":"x","type":"stdio"}],"extensions":[],"extensionDirectories":["com.example.client"],` +
		`"diagnostics":[{"severity":"error","code":"skill-name-mismatch","path":"skills/b/SKILL.md","pointer":"/name","line":2,"column":7,"message":"*"},` +
		`{"severity":"error","code":"mcp-cwd-escapes-root","path":"mcp.json","pointer":"/mcpServers/y/cwd","line":3,"column":52,"message":"*"}]}`
	for _, d := range doc["diagnostics"].([]any) {
		d.(map[string]any)["message"] = "*"
	}
	got, _ := json.Marshal(doc)
	var wantDoc map[string]any
	if err := json.Unmarshal([]byte(want), &wantDoc); err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(wantDoc)
	if string(got) != string(wantJSON) {
		t.Errorf("JSON\n got %s\nwant %s", got, wantJSON)
	}
}

func TestValidateRejected(t *testing.T) {
	dir := clitest.WritePlugin(t, map[string]string{"plugin.json": `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "Bad"}`})
	code, out, _ := plugkit(t, "validate", dir)
	if code != 1 || !strings.Contains(out, "plugin.json:1:") || !strings.Contains(out, "error[manifest-name-invalid]") || !strings.Contains(out, "rejected") {
		t.Errorf("exit %d\n%s", code, out)
	}
	code, out, _ = plugkit(t, "validate", "--json", dir)
	var doc ValidateReport
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 1 || doc.Loaded || doc.Plugin != nil || len(doc.Skills) != 0 || len(doc.Diagnostics) != 1 {
		t.Errorf("exit %d, %v\n%s", code, err, out)
	}
	if !strings.Contains(out, `"plugin": null`) || !strings.Contains(out, `"skills": []`) {
		t.Errorf("rejected document must have null plugin and empty lists:\n%s", out)
	}
}

func TestValidateSeveralPaths(t *testing.T) {
	good := clitest.WritePlugin(t, map[string]string{"plugin.json": testManifest})
	missing := filepath.Join(t.TempDir(), "missing")
	code, out, _ := plugkit(t, "validate", "--json", good, missing)
	var docs []ValidateReport
	if err := json.Unmarshal([]byte(out), &docs); err != nil || len(docs) != 2 {
		t.Fatalf("%v\n%s", err, out)
	}
	if code != 2 || !docs[0].Loaded || docs[1].Loaded || docs[0].Path != good || docs[1].Diagnostics[0].Code != "io-error" {
		t.Errorf("exit %d: %+v", code, docs)
	}
	code, out, _ = plugkit(t, "validate", good, good)
	if code != 0 || strings.Count(out, "== ") != 2 {
		t.Errorf("exit %d\n%s", code, out)
	}
}

func TestValidateWarningsOnlyExitZero(t *testing.T) {
	dir := clitest.WritePlugin(t, map[string]string{
		"plugin.json": `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "demo", "skills": "x"}`,
		"mcp.json":    `{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {"s": {"type": "sse", "url": "https://x.example/sse"}}}`,
	})
	code, out, _ := plugkit(t, "validate", "--transports", "stdio,streamable-http", dir)
	if code != 0 || !strings.Contains(out, "warning[manifest-unknown-field]") || !strings.Contains(out, "warning[mcp-transport-unsupported]") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

func TestValidateUsage(t *testing.T) {
	for _, args := range [][]string{
		{"validate"},
		{"validate", "--transports", "carrier-pigeon", "."},
		{"validate", "--no-such-flag", "."},
		{"no-such-verb"},
	} {
		if code, _, errOut := plugkit(t, args...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	code, out, _ := plugkit(t, "validate", "--help")
	if code != 0 || !strings.Contains(out, "Example") && !strings.Contains(out, "Examples") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
}

// TestValidateHints: the mistakes a newcomer makes get a message that
// says what to do.
func TestValidateHints(t *testing.T) {
	dir := clitest.WritePackPlugin(t, clitest.PackManifest)
	// plugin.json for its directory: the directory is named, the gzip
	// reader's failure is not, and the path is a wrong argument (exit 2).
	code, out, _ := plugkit(t, "validate", dir+"/plugin.json")
	if code != command.ExitUsage || !strings.Contains(out, "give the plugin's directory "+dir+"\n") || strings.Contains(out, "gzip") || strings.Contains(out, "archive") {
		t.Errorf("plugin.json: exit %d\n%s", code, out)
	}
	code, out, errOut := plugkit(t, "inspect", dir+"/plugin.json", "--json")
	if code != command.ExitUsage || clitest.ErrorCode(t, out) != command.CodeUsage || !strings.Contains(errOut, "give the plugin's directory "+dir) {
		t.Errorf("inspect plugin.json: exit %d\n%s%s", code, out, errOut)
	}
	// An archive from "tar czf": GNU headers, which plugkit refuses.
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	tw.WriteHeader(&tar.Header{Name: "plugin.json", Mode: 0o644, Size: int64(len(clitest.PackManifest)), Format: tar.FormatGNU})
	tw.Write([]byte(clitest.PackManifest))
	tw.Close()
	gz.Close()
	file := filepath.Join(t.TempDir(), "demo.tar.gz")
	os.WriteFile(file, buf.Bytes(), 0o644)
	code, out, _ = plugkit(t, "validate", file)
	if code != command.ExitFailed || !strings.Contains(out, "plugkit pack") {
		t.Errorf("tar czf archive: exit %d\n%s", code, out)
	}
	// unpack says the same, names the user's file, and writes nothing.
	dest := filepath.Join(t.TempDir(), "demo")
	code, out, errOut = plugkit(t, "unpack", file, dest, "--json")
	if code != command.ExitFailed || clitest.ErrorCode(t, out) != command.CodeArchive || !strings.Contains(errOut, "plugkit pack") || !strings.Contains(errOut, file) {
		t.Errorf("unpack of a tar czf archive: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Errorf("unpack of a refused archive left %s: %v", dest, err)
	}
}
