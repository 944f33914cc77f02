package home

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/install"
	"github.com/plugkit/plugkit/internal/syncbuf"
)

// homePlugin writes a plugin with one skill and the given mcp.json servers
// (name -> JSON object) into dir, replacing what was there.
func homePlugin(t *testing.T, dir, name, version string, servers map[string]string) string {
	t.Helper()
	os.RemoveAll(dir)
	files := map[string]string{
		"plugin.json":           `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "` + name + `", "version": ` + jsonString(version) + `}`,
		"skills/hello/SKILL.md": "---\nname: hello\ndescription: Says hello.\n---\nHi.\n",
		"bin/db":                "#!/bin/sh\necho db\n",
	}
	if servers != nil {
		var parts []string
		for k, v := range servers {
			parts = append(parts, jsonString(k)+": "+v)
		}
		files["mcp.json"] = `{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {` + strings.Join(parts, ", ") + `}}`
	}
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(dir, "bin/db"), 0o755)
	return dir
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

const dbServer = `{"type": "stdio", "command": "./bin/db", "args": ["--data", "${PLUGIN_DATA}/db"], "env": {"MODE": "fast"}}`

func TestInstallVerbs(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	src := homePlugin(t, filepath.Join(dir, "kv"), "kv", "1.0.0", map[string]string{"db": dbServer})

	// Without a terminal or --yes: refused, with what needed consent shown.
	code, out, errOut := runCLI(t, "install", src, "--home", home)
	if code != 1 || !strings.Contains(errOut, "--yes") || !strings.Contains(out, "would install kv 1.0.0") ||
		!strings.Contains(out, "db (stdio): ./bin/db --data ${PLUGIN_DATA}/db") || !strings.Contains(out, "env MODE") {
		t.Fatalf("install without consent: %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out, "fast") {
		t.Fatal("an env value was printed")
	}
	code, out, _ = runCLI(t, "install", src, "--home", home, "--json")
	if code != 1 || clitest.ErrorCode(t, out) != "consent-required" {
		t.Fatalf("install --json without consent: %d %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(home, "plugkit.lock")); !os.IsNotExist(err) {
		t.Fatalf("a refused install wrote the lock: %v", err)
	}

	code, out, errOut = runCLI(t, "install", src, "--home", home, "--yes", "--json")
	if code != 0 {
		t.Fatalf("install --yes: %d %s %s", code, out, errOut)
	}
	var res install.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Changes) != 1 || res.Changes[0].Action != install.ActionInstall ||
		res.Changes[0].New.Servers[0].Env["MODE"] == "fast" {
		t.Fatalf("install document: %v\n%s", err, out)
	}

	// list --json has exactly the documented members.
	code, out, _ = runCLI(t, "list", "--home", home, "--json")
	var doc map[string][]map[string]any
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || len(doc["plugins"]) != 1 {
		t.Fatalf("list --json: %d %v\n%s", code, err, out)
	}
	var keys []string
	for k := range doc["plugins"][0] {
		keys = append(keys, k)
	}
	if got := strings.Join(slices.Sorted(slices.Values(keys)), ","); got != "archiveDigest,dataDir,identity,installedAt,name,path,servers,skills,source,state,version" {
		t.Errorf("list members: %s", got)
	}
	p := doc["plugins"][0]
	if p["state"] != "ok" || p["skills"].([]any)[0] != "kv/hello" || p["servers"].([]any)[0] != "kv/db" || p["dataDir"] != filepath.Join(home, "data", "kv") {
		t.Errorf("list entry: %v", p)
	}
	code, out, _ = runCLI(t, "list", "--home", home)
	if code != 0 || !strings.Contains(out, "kv    1.0.0") {
		t.Fatalf("list: %d\n%s", code, out)
	}

	// An update that adds a server: dry run, refusal, consent.
	homePlugin(t, src, "kv", "1.1.0", map[string]string{"db": dbServer,
		"api":  `{"type": "streamable-http", "url": "https://api.example.com/mcp", "headers": {"X-Key": "k"}}`,
		"tool": `{"type": "stdio", "command": "./bin/db", "args": ["--mode", "two words"], "cwd": "./bin", "env": {"TOKEN": "t", "LEVEL": "1"}}`})
	lockBefore := readHomeFile(t, home, "plugkit.lock")
	code, out, _ = runCLI(t, "update", "--home", home, "--dry-run")
	// An added server shows what install would show of it.
	for _, line := range []string{"would update kv 1.0.0 -> 1.1.0", "  server api added\n    api (streamable-http): https://api.example.com/mcp\n      headers X-Key\n",
		"  server tool added\n    tool (stdio): ./bin/db --mode \"two words\"\n      cwd ./bin\n      env LEVEL TOKEN\n", "needs consent"} {
		if code != 0 || !strings.Contains(out, line) {
			t.Fatalf("update --dry-run: %d, no %q in\n%s", code, line, out)
		}
	}
	code, out, errOut = runCLI(t, "update", "kv", "--home", home)
	if code != 1 || !strings.Contains(errOut, "consent needed") || readHomeFile(t, home, "plugkit.lock") != lockBefore {
		t.Fatalf("update without consent: %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "update", "--home", home, "--yes")
	if code != 0 || !strings.Contains(out, "updated kv 1.0.0 -> 1.1.0") {
		t.Fatalf("update --yes: %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "update", "--home", home)
	if code != 0 || !strings.Contains(out, "kv 1.1.0 is up to date") {
		t.Fatalf("update when up to date: %d\n%s", code, out)
	}

	// check, tamper, check again, sync.
	code, out, _ = runCLI(t, "check", "--home", home)
	if code != 0 || out != "kv: ok\n" {
		t.Fatalf("check: %d %q", code, out)
	}
	list, _ := clitest.MustHome(t, home).List()
	target := filepath.Join(list[0].Path, "bin", "db")
	os.Chmod(target, 0o755)
	os.WriteFile(target, []byte("#!/bin/sh\nrm -rf ~\n"), 0o755)
	code, out, _ = runCLI(t, "check", "--home", home, "--json")
	var cd checkDoc
	if err := json.Unmarshal([]byte(out), &cd); code != 1 || err != nil || cd.OK || cd.Plugins[0].Problems[0].Path != "bin/db" {
		t.Fatalf("check after tampering: %d %v\n%s", code, err, out)
	}
	code, out, _ = runCLI(t, "check", "--home", home)
	if code != 1 || !strings.Contains(out, "modified: bin/db (content differs, mode 0755, want 0555)") {
		t.Fatalf("check text: %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "sync", "--home", home)
	if code != 0 || !strings.Contains(out, "restored kv 1.1.0") {
		t.Fatalf("sync: %d\n%s", code, out)
	}
	if code, _, _ = runCLI(t, "check", "--home", home); code != 0 {
		t.Fatal("check after sync failed")
	}

	// remove, twice.
	code, out, _ = runCLI(t, "remove", "kv", "--home", home)
	if code != 0 || !strings.Contains(out, "removed kv 1.1.0") || !strings.Contains(out, "data directory is kept") {
		t.Fatalf("remove: %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "remove", "kv", "--home", home, "--json")
	if code != 1 || clitest.ErrorCode(t, out) != "not-installed" {
		t.Fatalf("remove again: %d %s", code, out)
	}
	code, out, _ = runCLI(t, "remove", "kv", "--home", home, "--purge")
	if code != 0 || !strings.Contains(out, "kv was not installed; its data directory was deleted") {
		t.Fatalf("purge of kept data: %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "list", "--home", home)
	if code != 0 || !strings.Contains(out, "no plugins installed") {
		t.Fatalf("empty list: %d %s", code, out)
	}
}

func TestInstallVerbRefusals(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	for _, c := range []struct {
		args []string
		code int
		json string
		text string
	}{
		{[]string{"install", "kv"}, 2, "usage", "./kv"},
		{[]string{"install", "kv", "--registry", "http://127.0.0.1:1", "--channel", "a", "--release", "kv@1"}, 2, "usage", "exclude"},
		{[]string{"install", filepath.Join(dir, "missing")}, 2, "io", "no such file"},
		{[]string{"update", "nope"}, 1, "not-installed", "not installed"},
		{[]string{"check", "nope"}, 1, "not-installed", "not installed"},
		{[]string{"remove"}, 2, "usage", "requires at least 1 arg"},
		{[]string{"install"}, 2, "usage", "requires at least 1 arg"},
		{[]string{"list", "extra"}, 2, "usage", "unknown command"},
	} {
		code, _, errOut := runCLI(t, append(c.args, "--home", home)...)
		if code != c.code || !strings.Contains(errOut, c.text) {
			t.Errorf("%v: %d %q, want %d and %q", c.args, code, errOut, c.code, c.text)
		}
		code, out, _ := runCLI(t, append(c.args, "--home", home, "--json")...)
		if got := clitest.ErrorCode(t, out); code != c.code || got != c.json {
			t.Errorf("%v --json: %d %s, want %d %s", c.args, code, got, c.code, c.json)
		}
	}
	// A rejected plugin: its diagnostics in the document.
	bad := filepath.Join(dir, "bad")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, "plugin.json"), []byte(`{"name": "x"}`), 0o644)
	code, out, _ := runCLI(t, "install", bad, "--home", home, "--yes", "--json")
	var doc command.ErrorDoc
	if json.Unmarshal([]byte(out), &doc); code != 1 || doc.Error.Code != "plugin-rejected" || len(doc.Diagnostics) == 0 {
		t.Fatalf("rejected: %d %s", code, out)
	}
	// A plugin with error diagnostics: refused, with them.
	invalid := homePlugin(t, filepath.Join(dir, "invalid"), "kv", "1", map[string]string{"db": `{"type": "stdio", "command": "../escape"}`})
	code, out, _ = runCLI(t, "install", invalid, "--home", home, "--yes", "--json")
	if json.Unmarshal([]byte(out), &doc); code != 1 || doc.Error.Code != "plugin-invalid" || len(doc.Diagnostics) == 0 {
		t.Fatalf("invalid: %d %s", code, out)
	}
	// Another source of an installed name.
	a := homePlugin(t, filepath.Join(dir, "a", "kv"), "kv", "1", nil)
	b := homePlugin(t, filepath.Join(dir, "b", "kv"), "kv", "1", nil)
	if code, _, errOut := runCLI(t, "install", a, "--home", home, "--yes"); code != 0 {
		t.Fatal(errOut)
	}
	code, out, _ = runCLI(t, "install", b, "--home", home, "--yes", "--json")
	if code != 1 || clitest.ErrorCode(t, out) != "name-conflict" {
		t.Fatalf("conflict: %d %s", code, out)
	}
	code, out, _ = runCLI(t, "install", b, "--home", home, "--yes", "--replace")
	if code != 0 || !strings.Contains(out, "replaced kv 1 from "+b) {
		t.Fatalf("replace: %d %s", code, out)
	}
	// A busy home.
	release := holdWriter(t, home)
	defer release()
	code, out, _ = runCLI(t, "remove", "kv", "--home", home, "--lock-timeout", "50ms", "--json")
	if code != 1 || clitest.ErrorCode(t, out) != "home-busy" {
		t.Fatalf("busy: %d %s", code, out)
	}
}

// TestInstallConsentOnTerminal: on a terminal, install shows the launch
// surface on stderr and asks; "y" installs, anything else refuses.
func TestInstallConsentOnTerminal(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	src := homePlugin(t, filepath.Join(dir, "kv"), "kv", "1.0.0", map[string]string{"db": dbServer})
	for _, c := range []struct {
		answer string
		code   int
	}{{"n\n", 1}, {"\n", 1}, {"", 1}, {"yes\n", 0}} {
		var out, errb bytes.Buffer
		f := factory.Quiet(&out, &errb)
		f.In, f.InTerminal = strings.NewReader(c.answer), true
		code := program().RunContext(context.Background(), f, []string{"install", src, "--home", home})
		if code != c.code || !strings.Contains(errb.String(), "will be able to run:") || !strings.Contains(errb.String(), "Install kv? [y/N]") {
			t.Errorf("answer %q: exit %d\nstderr: %s", c.answer, code, errb.String())
		}
	}
	if l, _ := clitest.MustHome(t, home).List(); len(l) != 1 {
		t.Fatal("not installed after yes")
	}
}

// TestInstallOutputIsTerminalSafe: text from the plugin (version, args,
// env names) cannot drive the terminal; --json keeps it exact.
func TestInstallOutputIsTerminalSafe(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	src := homePlugin(t, filepath.Join(dir, "kv"), "kv", "1.0\x1b[2J", map[string]string{
		"db": `{"type": "stdio", "command": "./bin/db", "args": ["\u001b]0;pwned\u0007", "\u202eexe"]}`})
	code, out, errOut := runCLI(t, "install", src, "--home", home, "--yes")
	if code != 0 {
		t.Fatal(errOut)
	}
	for _, bad := range []string{"\x1b", "\x07", "\u202e"} {
		if strings.Contains(out, bad) {
			t.Errorf("text output holds %q:\n%q", bad, out)
		}
	}
	if !strings.Contains(out, `1.0\x1b[2J`) {
		t.Errorf("escaped version missing: %q", out)
	}
	_, out, _ = runCLI(t, "list", "--home", home, "--json")
	if !strings.Contains(out, `"version": "1.0\u001b[2J"`) {
		t.Errorf("--json is not exact: %s", out)
	}
	_, out, _ = runCLI(t, "list", "--home", home)
	if strings.Contains(out, "\x1b") {
		t.Errorf("list text holds ESC: %q", out)
	}
}

func readHomeFile(t *testing.T, home, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// holdWriter keeps the home's writer lock until the returned function is
// called: an install waiting at its consent prompt (on a terminal whose
// answer never comes) holds it, as it would for a person thinking.
func holdWriter(t *testing.T, home string) func() {
	t.Helper()
	src := homePlugin(t, filepath.Join(t.TempDir(), "waiting"), "waiting", "1", nil)
	pr, pw := io.Pipe()
	errw := &syncbuf.Buffer{}
	f := factory.Quiet(io.Discard, errw)
	f.In, f.InTerminal = pr, true
	done := make(chan struct{})
	go func() {
		program().RunContext(context.Background(), f, []string{"install", src, "--home", home})
		close(done)
	}()
	for i := 0; ; i++ {
		if strings.Contains(errw.String(), "[y/N]") {
			break
		}
		if i == 500 {
			t.Fatal("the waiting install never took the lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return func() {
		pw.Close()
		<-done
	}
}

// TestInstallPolicyVerbs: --policy stores the policy, the lock records
// the admitting rule, a plugin outside it is refused with policy-refused,
// a broken policy file is policy-invalid, and a second home without the
// policy refuses to sync.
func TestInstallPolicyVerbs(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	allowed := homePlugin(t, filepath.Join(dir, "allowed", "kv"), "kv", "1", nil)
	outside := homePlugin(t, filepath.Join(dir, "outside", "notes"), "notes", "1", nil)
	policy := filepath.Join(dir, "policy.yaml")
	os.WriteFile(policy, []byte("rules:\n  - name: \"*\"\n    method: local-directory\n    directories: [allowed]\n"), 0o644)
	code, out, errOut := runCLI(t, "install", allowed, "--home", home, "--yes", "--policy", policy)
	if code != 0 || !strings.Contains(out, "admitted by rule 1 (*, local-directory)") {
		t.Fatalf("install --policy: %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, "policy.json")); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCLI(t, "install", outside, "--home", home, "--yes", "--json")
	if code != 1 || clitest.ErrorCode(t, out) != "policy-refused" {
		t.Fatalf("outside the policy: %d %s", code, out)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"rules": [{"name": "*", "method": "telepathy"}]}`), 0o644)
	code, out, _ = runCLI(t, "install", allowed, "--home", home, "--yes", "--json", "--policy", bad)
	if code != 2 || clitest.ErrorCode(t, out) != "policy-invalid" {
		t.Fatalf("bad policy: %d %s", code, out)
	}
	home2 := filepath.Join(dir, "home2")
	os.MkdirAll(home2, 0o755)
	os.WriteFile(filepath.Join(home2, "plugkit.lock"), []byte(readHomeFile(t, home, "plugkit.lock")), 0o644)
	code, out, _ = runCLI(t, "sync", "--home", home2, "--json")
	if code != 1 || clitest.ErrorCode(t, out) != "policy-missing" {
		t.Fatalf("sync without the policy: %d %s", code, out)
	}
	os.WriteFile(filepath.Join(home2, "policy.json"), []byte(readHomeFile(t, home, "policy.json")), 0o644)
	if code, out, errOut = runCLI(t, "sync", "--home", home2); code != 0 || !strings.Contains(out, "restored kv 1") {
		t.Fatalf("sync with the policy: %d\n%s\n%s", code, out, errOut)
	}
}

// TestInstallShowsWarnings: a plugin installs with its warning
// diagnostics shown in the summary.
func TestInstallShowsWarnings(t *testing.T) {
	dir := t.TempDir()
	src := homePlugin(t, filepath.Join(dir, "kv"), "kv", "1", nil)
	os.WriteFile(filepath.Join(src, "plugin.json"), []byte(`{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "kv", "skills": []}`), 0o644)
	code, out, errOut := runCLI(t, "install", src, "--home", filepath.Join(dir, "home"), "--yes")
	if code != 0 || !strings.Contains(out, "warning[manifest-unknown-field]") {
		t.Fatalf("%d\n%s\n%s", code, out, errOut)
	}
}

// TestUpdateConsentOnCode: an update that changes only the file of a ./
// command needs no consent but its summary names the file;
// --consent-on-code makes it need consent (consent-required without
// --yes, nothing changed). update --json and sync --json print the
// changes document.
func TestUpdateConsentOnCode(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	src := homePlugin(t, filepath.Join(dir, "kv"), "kv", "1.0.0", map[string]string{"db": dbServer})
	if code, _, errOut := runCLI(t, "install", src, "--home", home, "--yes"); code != 0 {
		t.Fatal(errOut)
	}
	writeCode := func(body string) {
		if err := os.WriteFile(filepath.Join(src, "bin", "db"), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeCode("echo two")
	code, out, errOut := runCLI(t, "update", "--home", home)
	if code != 0 || !strings.Contains(out, "updated kv 1.0.0 -> 1.0.0") || !strings.Contains(out, "code changed under ./ commands: bin/db") {
		t.Fatalf("code-only update: %d\n%s\n%s", code, out, errOut)
	}

	writeCode("echo three")
	lockBefore := readHomeFile(t, home, "plugkit.lock")
	code, out, errOut = runCLI(t, "update", "--home", home, "--consent-on-code")
	if code != 1 || !strings.Contains(out, "code changed under ./ commands: bin/db") || !strings.Contains(errOut, "consent needed to update kv") ||
		readHomeFile(t, home, "plugkit.lock") != lockBefore {
		t.Fatalf("--consent-on-code without --yes: %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "update", "--home", home, "--consent-on-code", "--json")
	if code != 1 || clitest.ErrorCode(t, out) != "consent-required" {
		t.Fatalf("--consent-on-code --json: %d %s", code, out)
	}
	code, out, errOut = runCLI(t, "update", "--home", home, "--consent-on-code", "--yes", "--json")
	var doc OutcomeDoc
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || len(doc.Plugins) != 1 || doc.Plugins[0].Outcome != OutcomeUpdated ||
		!doc.Plugins[0].Change.NeedsConsent || strings.Join(doc.Plugins[0].Change.CodeFiles, ",") != "bin/db" || doc.Error != nil {
		t.Fatalf("update --consent-on-code --yes --json: %d %v\n%s\n%s", code, err, out, errOut)
	}

	code, out, errOut = runCLI(t, "sync", "--home", home, "--json")
	doc = OutcomeDoc{}
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || len(doc.Plugins) != 1 || doc.Plugins[0].Outcome != OutcomeUnchanged {
		t.Fatalf("sync --json: %d %v\n%s\n%s", code, err, out, errOut)
	}
}
