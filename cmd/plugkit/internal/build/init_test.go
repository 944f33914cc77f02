package build

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
)

// TestInitValidatesClean: every option combination writes a plugin that
// validates with no diagnostic at all.
func TestInitValidatesClean(t *testing.T) {
	var combos [][]string
	for _, name := range [][]string{nil, {"--name", "acme.tools"}, {"--name", "a"}} {
		for _, skill := range [][]string{nil, {"--skill", "summarize"}} {
			for _, mcp := range [][]string{nil, {"--mcp", "stdio"}, {"--mcp", "http"}} {
				combos = append(combos, append(append(append([]string{}, name...), skill...), mcp...))
			}
		}
	}
	for _, args := range combos {
		dir := filepath.Join(t.TempDir(), "my-plugin")
		code, out, errOut := plugkit(t, append([]string{"init", dir}, args...)...)
		if code != 0 || errOut != "" {
			t.Fatalf("init %v: exit %d\n%s%s", args, code, out, errOut)
		}
		code, out, _ = plugkit(t, "validate", "--json", dir)
		var r ValidateReport
		if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || !r.Loaded || len(r.Diagnostics) != 0 || len(r.Skills) != 1 {
			t.Errorf("init %v: validate exit %d, %v\n%s", args, code, err, out)
		}
		wantServers := 0
		if strings.Contains(strings.Join(args, " "), "--mcp") {
			wantServers = 1
		}
		if len(r.MCPServers) != wantServers {
			t.Errorf("init %v: %d servers", args, len(r.MCPServers))
		}
		if r.Plugin != nil && r.Plugin.Version != "0.1.0" {
			t.Errorf("init %v: version %q", args, r.Plugin.Version)
		}
	}
}

// The default name is the directory's, and the skill's the plugin's; an
// existing empty directory (the current one, say) is written into.
func TestInitDefaults(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lint3r")
	os.Mkdir(dir, 0o755)
	t.Chdir(dir)
	code, out, _ := plugkit(t, "init")
	if code != 0 || !strings.Contains(out, "created plugin lint3r in .") || !strings.Contains(out, "plugkit validate .\n") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if _, err := os.Stat("skills/lint3r/SKILL.md"); err != nil {
		t.Error(err)
	}
	// A plugin name that is no skill name gives the skill "hello".
	other := filepath.Join(t.TempDir(), "x")
	if code, out, _ := plugkit(t, "init", other, "--name", "acme.tools"); code != 0 || !strings.Contains(out, "skills/hello/SKILL.md") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// TestInitIntoCurrentDirectory: init writes into an empty "." in place,
// which the writers that replace their directory by a rename refuse.
func TestInitIntoCurrentDirectory(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if code, out, errOut := plugkit(t, "init", ".", "--name", "acme.here"); code != 0 || !strings.Contains(out, "plugin.json") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "plugin.json")); err != nil {
		t.Error(err)
	}
}

// TestInitRefuses: a non-empty directory, a name the loader refuses, an
// unknown transport: refused, and nothing written.
func TestInitRefuses(t *testing.T) {
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "notes.txt"), []byte("mine"), 0o644)
	code, _, errOut := plugkit(t, "init", full)
	if code != command.ExitUsage || !strings.Contains(errOut, "not empty") {
		t.Errorf("non-empty: exit %d, %q", code, errOut)
	}
	if entries, _ := os.ReadDir(full); len(entries) != 1 {
		t.Errorf("wrote into a non-empty directory: %v", entries)
	}
	parent := t.TempDir()
	for _, c := range []struct {
		args []string
		exit int
		diag string
	}{
		{[]string{"--name", "Bad"}, command.ExitFailed, "manifest-name-invalid"},
		{[]string{"--name", "has--double"}, command.ExitFailed, "manifest-name-invalid"},
		{[]string{"--skill", "Not-A-Skill"}, command.ExitFailed, "skill-name-invalid"},
		{[]string{"--skill", "a/b"}, command.ExitUsage, ""},
		{[]string{"--skill", ".."}, command.ExitUsage, ""},
		{[]string{"--mcp", "carrier-pigeon"}, command.ExitUsage, ""},
	} {
		dir := filepath.Join(parent, "new")
		code, out, errOut := plugkit(t, append([]string{"init", dir}, c.args...)...)
		if code != c.exit || !strings.Contains(out, c.diag) || errOut == "" {
			t.Errorf("%v: exit %d\n%s%s", c.args, code, out, errOut)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%v: %s was created", c.args, dir)
		}
		if c.exit == command.ExitFailed && c.diag != "" {
			code, out, _ := plugkit(t, append([]string{"init", "--json", dir}, c.args...)...)
			if doc := clitest.DecodeErrorDoc(t, out); code != command.ExitFailed || doc.Error.Code != command.CodeInvalid || len(doc.Diagnostics) == 0 || doc.Diagnostics[0].Code != c.diag {
				t.Errorf("%v --json: exit %d, %+v", c.args, code, doc)
			}
		}
	}
}
