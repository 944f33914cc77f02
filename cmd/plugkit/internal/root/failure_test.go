package root

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
)

// TestJSONFailureCodes: every verb with --json, failing in each way it
// can, prints exactly one failure document with the documented error code
// and the diagnostics that explain it, and exits with the code's status.
func TestJSONFailureCodes(t *testing.T) {
	tmp := t.TempDir()
	rejected := clitest.WritePlugin(t, map[string]string{"plugin.json": `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "Bad"}`})
	good := clitest.WritePackPlugin(t, clitest.PackManifest)
	linked := clitest.WritePackPlugin(t, clitest.PackManifest)
	os.Symlink("plugin.json", filepath.Join(linked, "alias.json"))
	notGzip := filepath.Join(tmp, "x.tar.gz")
	os.WriteFile(notGzip, []byte("not gzip"), 0o644)
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "f"), nil, 0o644)
	missing := filepath.Join(tmp, "missing")

	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/publish"):
			w.WriteHeader(http.StatusUnprocessableEntity)
			w.Write([]byte(`{"error": {"code": "plugin_rejected", "message": "rejected", "diagnostics": [{"severity": "error", "code": "mcp-env-reserved", "path": "mcp.json", "message": "x"}]}}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error": {"code": "not_found", "message": "no such plugin"}}`))
		}
	}))
	defer refusing.Close()
	t.Setenv("PLUGKIT_TOKEN", "t")
	t.Setenv("PLUGKIT_REGISTRY", "")

	for _, c := range []struct {
		args  []string
		exit  int
		code  string
		diags int // minimum number of diagnostics
	}{
		{[]string{"inspect", rejected}, command.ExitFailed, command.CodeRejected, 1},
		{[]string{"inspect", notGzip}, command.ExitFailed, command.CodeArchive, 0},
		{[]string{"inspect", missing}, command.ExitUsage, command.CodeIO, 0},
		{[]string{"inspect", "--strict-links", linked}, command.ExitFailed, command.CodeFailed, 0},
		{[]string{"inspect", "a", "b"}, command.ExitUsage, command.CodeUsage, 0},
		{[]string{"pack", rejected, "-o", filepath.Join(tmp, "r.tar.gz")}, command.ExitFailed, command.CodeRejected, 1},
		{[]string{"pack", "--strict-links", linked, "-o", filepath.Join(tmp, "l.tar.gz")}, command.ExitFailed, command.CodeFailed, 0},
		{[]string{"pack", missing}, command.ExitUsage, command.CodeIO, 0},
		{[]string{"pack", good, "-o", filepath.Join(missing, "x.tar.gz")}, command.ExitUsage, command.CodeIO, 0},
		{[]string{"digest", missing}, command.ExitUsage, command.CodeIO, 0},
		{[]string{"unpack", notGzip, filepath.Join(tmp, "u")}, command.ExitFailed, command.CodeArchive, 0},
		{[]string{"unpack", notGzip, full}, command.ExitUsage, command.CodeUsage, 0},
		{[]string{"init", full}, command.ExitUsage, command.CodeUsage, 0},
		{[]string{"init", filepath.Join(tmp, "i"), "--name", "Bad"}, command.ExitFailed, command.CodeInvalid, 1},
		{[]string{"version", "extra"}, command.ExitUsage, command.CodeUsage, 0},
		{[]string{"catalog", "--registry", refusing.URL}, command.ExitFailed, command.CodeRegistry, 0},
		{[]string{"resolve", "demo", "--registry", refusing.URL}, command.ExitFailed, command.CodeRegistry, 0},
		{[]string{"resolve", "demo"}, command.ExitUsage, command.CodeUsage, 0},
		{[]string{"fetch", "demo", filepath.Join(tmp, "f"), "--registry", refusing.URL}, command.ExitFailed, command.CodeRegistry, 0},
		{[]string{"publish", good, "--registry", refusing.URL}, command.ExitFailed, command.CodeRegistry, 1},
		{[]string{"publish", rejected, "--registry", refusing.URL}, command.ExitFailed, command.CodeRejected, 1},
	} {
		args := append(c.args, "--json")
		code, out, errOut := plugkit(t, args...)
		doc := clitest.DecodeErrorDoc(t, out)
		if code != c.exit || doc.Error.Code != c.code || doc.Error.Message == "" || len(doc.Diagnostics) < c.diags {
			t.Errorf("plugkit %s: exit %d, %+v; want exit %d, code %s, %d+ diagnostics\nstderr: %s",
				strings.Join(args, " "), code, doc, c.exit, c.code, c.diags, errOut)
		}
		if !strings.HasPrefix(errOut, "plugkit: ") {
			t.Errorf("plugkit %s: no message on stderr: %q", strings.Join(args, " "), errOut)
		}
		// Without --json, diagnostics are on stdout, as in every verb.
		if c.diags > 0 {
			_, out, _ := plugkit(t, c.args...)
			if !strings.Contains(out, "error[") {
				t.Errorf("plugkit %s: diagnostics not on stdout: %q", strings.Join(c.args, " "), out)
			}
		}
	}
}

// TestTerminalSafeText: text that comes from a plugin reaches the terminal
// escaped in every verb of this file's owner, and exact in --json.
func TestTerminalSafeText(t *testing.T) {
	evil := "evil\x1b]0;owned\x07\u202e"
	dir := clitest.WritePlugin(t, map[string]string{
		"plugin.json": `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "demo", "version": "1.0.0",
			"description": "` + jsonEscape(evil) + `", "x-` + jsonEscape(evil) + `": 1}`,
		"skills/a/SKILL.md": "---\nname: a\ndescription: \"" + jsonEscape(evil) + "\"\n---\n",
		"mcp.json": `{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {"` + jsonEscape(evil) +
			`": {"type": "stdio", "command": "node", "args": ["` + jsonEscape(evil) + `"]}}}`,
	})
	archive := filepath.Join(t.TempDir(), "demo.tar.gz")
	for _, args := range [][]string{
		{"validate", dir},
		{"validate", "--format", "github", dir},
		{"inspect", dir},
		{"pack", dir, "-o", archive},
		{"inspect", archive},
	} {
		code, out, errOut := plugkit(t, args...)
		if strings.ContainsAny(out+errOut, "\x1b\x07\u202e") {
			t.Errorf("%v: exit %d, raw control characters reach the terminal:\n%q\n%q", args, code, out, errOut)
		}
		if !strings.Contains(out, `evil\x1b]0;owned`) {
			t.Errorf("%v: the escaped text is not shown:\n%s", args, out)
		}
	}
	_, out, _ := plugkit(t, "inspect", "--json", dir)
	if !strings.Contains(out, `evil\u001b]0;owned\u0007`+"\u202e") {
		t.Errorf("--json is not exact:\n%s", out)
	}
}

func jsonEscape(s string) string {
	return strings.NewReplacer("\x1b", `\u001b`, "\x07", `\u0007`).Replace(s)
}

// TestEveryJSONVerbPrintsOneDocumentOnFailure: every command with --json,
// now or added later, given arguments it cannot use (paths that do not
// exist, too many of them), fails with exactly one JSON document on stdout.
func TestEveryJSONVerbPrintsOneDocumentOnFailure(t *testing.T) {
	t.Setenv("PLUGKIT_REGISTRY", "")
	t.Setenv("PLUGKIT_HOME", filepath.Join(t.TempDir(), "home"))
	missing := filepath.Join(t.TempDir(), "missing")
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string{}, path...), sub.Name()))
		}
		if c.Runnable() && c.Flags().Lookup("json") != nil {
			paths = append(paths, path)
		}
	}
	walk(Program().NewRootCmd(&factory.Factory{}), nil)
	if len(paths) < 25 {
		t.Fatalf("found only %d commands with --json: %v", len(paths), paths)
	}
	for _, path := range paths {
		args := append(append([]string{}, path...), "--json")
		for i := range 5 {
			args = append(args, filepath.Join(missing, fmt.Sprint(i)))
		}
		code, out, errOut := plugkit(t, args...)
		dec := json.NewDecoder(strings.NewReader(out))
		var doc any
		if code == 0 || dec.Decode(&doc) != nil || dec.More() {
			t.Errorf("plugkit %s: exit %d, want a failure with one JSON document on stdout:\n%s\nstderr: %s", strings.Join(path, " "), code, out, errOut)
		}
	}
}
