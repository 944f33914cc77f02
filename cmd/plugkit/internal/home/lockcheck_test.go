package home

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/install"
)

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
	var doc OutcomeDoc
	if err := json.Unmarshal([]byte(out), &doc); code != 1 || err != nil || doc.Error == nil || len(doc.Plugins) != 3 {
		t.Fatalf("sync --json: %d %v\n%s", code, err, out)
	}
	for i, want := range []string{OutcomeRestored, OutcomeRestored, OutcomeFailed} {
		if p := doc.Plugins[i]; p.Outcome != want || (want == OutcomeFailed) != (p.Error != nil) {
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
