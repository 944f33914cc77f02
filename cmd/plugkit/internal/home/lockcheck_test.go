package home

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/install"
)

// TestTamperedLockRunsNothing: a lock entry pointed at a version of the
// plugin that adds a stdio server, its servers left as reviewed, starts
// nothing. sync refuses it (and stores none of its bytes), list and check
// report it, mcp refuses it, and the gateway leaves it out and serves the
// other plugin. The added server would create a marker file: it never
// appears.
func TestTamperedLockRunsNothing(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "the-unapproved-server-ran")
	runServer := "#!/bin/sh\nexec '" + testServerBin(t) + "' \"$@\"\n"
	v1 := writeNamedPlugin(t, "kv", `{"db": {"type": "stdio", "command": "./bin/run"}}`, nil)
	v2 := writeNamedPlugin(t, "kv", `{"db": {"type": "stdio", "command": "./bin/run"}, "extra": {"type": "stdio", "command": "./bin/extra"}}`,
		map[string]string{"bin/extra": "#!/bin/sh\ntouch '" + marker + "'\n" + runServer[len("#!/bin/sh\n"):]})
	other, _ := gatewayPlugins(t)
	home, scratch := filepath.Join(dir, "home"), filepath.Join(dir, "scratch")
	for _, inst := range [][]string{{home, v1}, {home, other}, {scratch, v2}} {
		if code, _, errOut := runCLI(t, "install", "--yes", "--home", inst[0], inst[1]); code != 0 {
			t.Fatalf("install %s: %s", inst[1], errOut)
		}
	}
	wide, err := mustHome(t, scratch).Get("kv")
	if err != nil {
		t.Fatal(err)
	}
	h := mustHome(t, home)
	l, err := h.ReadLock()
	if err != nil {
		t.Fatal(err)
	}
	e := l.Find("kv")
	e.Source.Path, e.Identity, e.ArchiveDigest = wide.Source.Path, wide.Identity, wide.ArchiveDigest
	os.WriteFile(h.LockPath(), l.Encode(), 0o644)

	// sync fetches the wider tree, finds it does not match, stores nothing.
	code, out, _ := runCLI(t, "sync", "--home", home, "--json")
	var doc outcomeDoc
	if err := json.Unmarshal([]byte(out), &doc); code != 1 || err != nil || doc.Error == nil {
		t.Fatalf("sync: %d %v\n%s", code, err, out)
	}
	for _, p := range doc.Plugins {
		want := map[string]string{"alpha": outcomeUnchanged, "kv": outcomeFailed}[p.Name]
		if p.Outcome != want || (p.Name == "kv" && (p.Error.Code != "lock-mismatch" || !strings.Contains(p.Error.Message, "server extra added"))) {
			t.Errorf("sync %s: %+v %+v", p.Name, p, p.Error)
		}
	}
	if _, err := os.Lstat(h.TreePath(wide.ArchiveDigest)); err == nil {
		t.Fatal("sync stored the tree the lock does not describe")
	}
	code, out, _ = runCLI(t, "sync", "--home", home)
	if code != 1 || !strings.Contains(out, "kv: failed (lock-mismatch): ") || !strings.Contains(out, "alpha") {
		t.Fatalf("sync text: %d\n%s", code, out)
	}

	// A home that holds the wider tree already (as one that installed it).
	if b, err := exec.Command("cp", "-a", wide.Path, wide.Path+".files", filepath.Dir(h.TreePath(wide.ArchiveDigest))).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, b)
	}
	code, out, _ = runCLI(t, "list", "--home", home, "--json")
	var list listDoc
	if err := json.Unmarshal([]byte(out), &list); code != 1 || err != nil {
		t.Fatalf("list: %d %v %s", code, err, out)
	}
	for _, p := range list.Plugins {
		if want := map[string]string{"alpha": stateOK, "kv": stateMismatch}[p.Name]; p.State != want {
			t.Errorf("list %s: %s %+v", p.Name, p.State, p.Error)
		}
	}
	code, out, _ = runCLI(t, "check", "--home", home, "--json")
	if code != 1 || !strings.Contains(out, `"kind": "lock-mismatch"`) {
		t.Fatalf("check: %d %s", code, out)
	}
	if code, _, errOut := runCLI(t, "check", "--home", home); code != 1 || !strings.Contains(errOut, "not as the lock records") {
		t.Fatalf("check text: %d %s", code, errOut)
	}
	code, out, _ = runCLI(t, "mcp", "list", "--home", home, "kv", "--json")
	if code != 1 || clitest.ErrorCode(t, out) != "lock-mismatch" {
		t.Fatalf("mcp list kv: %d %s", code, out)
	}

	// The gateway serves alpha and leaves kv out.
	sess, g := stdioGateway(t, home, nil)
	tools := listTools(t, sess)
	if len(tools) == 0 || slices.ContainsFunc(tools, func(n string) bool { return strings.HasPrefix(n, "kv_") }) {
		t.Fatalf("gateway tools: %v", tools)
	}
	sess.Close()
	g.cmd.Wait()
	if !strings.Contains(g.stderr.String(), "lock-mismatch") && !strings.Contains(g.stderr.String(), install.ErrLockMismatch.Error()) {
		t.Errorf("the gateway did not say why kv is left out:\n%s", g.stderr.String())
	}
	if _, err := os.Lstat(marker); err == nil {
		t.Fatal("the server nobody approved ran")
	}
}

// TestPolicyVerbs: policy set and remove change the home's policy with
// consent, a missing policy.json is policy-missing for install while list
// still works, and a malformed one is policy-invalid, exit 2.
func TestPolicyVerbs(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	allowed := homePlugin(t, filepath.Join(dir, "allowed", "kv"), "kv", "1", nil)
	other := homePlugin(t, filepath.Join(dir, "elsewhere", "notes"), "notes", "1", nil)
	pol := filepath.Join(dir, "policy.json")
	os.WriteFile(pol, []byte(`{"rules": [{"name": "*", "method": "local-directory", "directories": ["allowed"]}]}`), 0o644)
	if code, _, errOut := runCLI(t, "install", allowed, "--home", home, "--yes", "--policy", pol); code != 0 {
		t.Fatalf("install --policy: %s", errOut)
	}
	os.Remove(filepath.Join(home, "policy.json"))
	code, out, _ := runCLI(t, "install", other, "--home", home, "--yes", "--json")
	if code != 1 || clitest.ErrorCode(t, out) != "policy-missing" {
		t.Fatalf("install without the policy: %d %s", code, out)
	}
	if code, _, _ := runCLI(t, "list", "--home", home); code != 0 {
		t.Fatalf("list without the policy: %d", code)
	}
	code, out, _ = runCLI(t, "check", "--home", home, "--json")
	if code != 1 || !strings.Contains(out, `"code": "policy-missing"`) {
		t.Fatalf("check without the policy: %d %s", code, out)
	}

	wider := filepath.Join(dir, "wider.json")
	os.WriteFile(wider, []byte(`{"rules": [{"name": "*", "method": "local-directory", "directories": ["allowed", "elsewhere"]}]}`), 0o644)
	code, out, errOut := runCLI(t, "policy", "set", wider, "--home", home)
	if code != 1 || !strings.Contains(out, "would change the trust policy: sha256:") || !strings.Contains(out, "kv: admitted by rule 1") || !strings.Contains(errOut, "--yes") {
		t.Fatalf("policy set without consent: %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut = runCLI(t, "policy", "set", wider, "--home", home, "--yes"); code != 0 || !strings.Contains(out, "trust policy: sha256:") {
		t.Fatalf("policy set --yes: %d\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "install", other, "--home", home, "--yes"); code != 0 {
		t.Fatalf("install under the new policy: %s", errOut)
	}
	if code, out, _ = runCLI(t, "policy", "set", wider, "--home", home, "--yes"); code != 0 || !strings.Contains(out, "nothing to do") {
		t.Fatalf("policy set again: %d %s", code, out)
	}

	os.WriteFile(filepath.Join(home, "policy.json"), []byte(`{"rules": [`), 0o644)
	code, out, _ = runCLI(t, "install", other, "--home", home, "--yes", "--json")
	if code != 2 || clitest.ErrorCode(t, out) != "policy-invalid" {
		t.Fatalf("install with a malformed policy: %d %s", code, out)
	}
	if code, _, _ := runCLI(t, "policy", "set", filepath.Join(dir, "nope.json"), "--home", home); code != 2 {
		t.Fatalf("policy set of a missing file: %d", code)
	}

	code, out, _ = runCLI(t, "policy", "remove", "--home", home, "--yes", "--json")
	var c install.PolicyChange
	if err := json.Unmarshal([]byte(out), &c); code != 0 || err != nil || c.New != "" || !c.Changed {
		t.Fatalf("policy remove: %d %v %s", code, err, out)
	}
	if _, err := os.Lstat(filepath.Join(home, "policy.json")); err == nil {
		t.Fatal("policy.json is still there")
	}
	if code, _, _ := runCLI(t, "check", "--home", home); code != 0 {
		t.Fatalf("check after policy remove: %d", code)
	}
}

// TestSyncOutcomes: sync of an empty home from a lock of three plugins,
// one of whose sources changed, restores the two it can and reports the
// third with its own code, in text and in JSON.
func TestSyncOutcomes(t *testing.T) {
	dir := t.TempDir()
	home1, home2 := filepath.Join(dir, "home1"), filepath.Join(dir, "home2")
	var srcs []string
	for _, name := range []string{"a", "b", "c"} {
		srcs = append(srcs, homePlugin(t, filepath.Join(dir, name), name, "1", nil))
	}
	if code, _, errOut := runCLI(t, append([]string{"install", "--yes", "--home", home1}, srcs...)...); code != 0 {
		t.Fatalf("install: %s", errOut)
	}
	homePlugin(t, srcs[2], "c", "2", nil)
	os.MkdirAll(home2, 0o755)
	os.WriteFile(filepath.Join(home2, "plugkit.lock"), []byte(readHomeFile(t, home1, "plugkit.lock")), 0o644)
	code, out, errOut := runCLI(t, "sync", "--home", home2)
	if code != 1 || !strings.Contains(out, "restored a 1") || !strings.Contains(out, "restored b 1") ||
		!strings.Contains(out, "c: failed (source-changed): ") || strings.Contains(out, "up to date") || strings.Contains(errOut, "context canceled") {
		t.Fatalf("sync: %d\n%s\n%s", code, out, errOut)
	}
	os.RemoveAll(home2)
	os.MkdirAll(home2, 0o755)
	os.WriteFile(filepath.Join(home2, "plugkit.lock"), []byte(readHomeFile(t, home1, "plugkit.lock")), 0o644)
	code, out, _ = runCLI(t, "sync", "--home", home2, "--json")
	var doc outcomeDoc
	if err := json.Unmarshal([]byte(out), &doc); code != 1 || err != nil || doc.Error == nil || len(doc.Plugins) != 3 {
		t.Fatalf("sync --json: %d %v\n%s", code, err, out)
	}
	for i, want := range []string{outcomeRestored, outcomeRestored, outcomeFailed} {
		if p := doc.Plugins[i]; p.Outcome != want || (want == outcomeFailed) != (p.Error != nil) {
			t.Errorf("%s: %+v", p.Name, p)
		}
	}
	if doc.Plugins[2].Error.Code != "source-changed" {
		t.Errorf("c: %+v", doc.Plugins[2].Error)
	}
	// list does not show the missing tree as healthy.
	code, out, _ = runCLI(t, "list", "--home", home2)
	if code != 1 || !strings.Contains(out, "c     1        1       0        missing") {
		t.Fatalf("list: %d\n%s", code, out)
	}
}
