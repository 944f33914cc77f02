package run

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	homecmd "github.com/plugkit/plugkit/cmd/plugkit/internal/home"
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
	wide, err := clitest.MustHome(t, scratch).Get("kv")
	if err != nil {
		t.Fatal(err)
	}
	h := clitest.MustHome(t, home)
	l, err := h.ReadLock()
	if err != nil {
		t.Fatal(err)
	}
	e := l.Find("kv")
	e.Source.Path, e.Identity, e.ArchiveDigest = wide.Source.Path, wide.Identity, wide.ArchiveDigest
	os.WriteFile(h.LockPath(), l.Encode(), 0o644)

	// sync fetches the wider tree, finds it does not match, stores nothing.
	code, out, _ := runCLI(t, "sync", "--home", home, "--json")
	var doc homecmd.OutcomeDoc
	if err := json.Unmarshal([]byte(out), &doc); code != 1 || err != nil || doc.Error == nil {
		t.Fatalf("sync: %d %v\n%s", code, err, out)
	}
	for _, p := range doc.Plugins {
		want := map[string]string{"alpha": homecmd.OutcomeUnchanged, "kv": homecmd.OutcomeFailed}[p.Name]
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
	var list homecmd.ListDoc
	if err := json.Unmarshal([]byte(out), &list); code != 1 || err != nil {
		t.Fatalf("list: %d %v %s", code, err, out)
	}
	for _, p := range list.Plugins {
		if want := map[string]string{"alpha": homecmd.StateOK, "kv": homecmd.StateMismatch}[p.Name]; p.State != want {
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
