//go:build unix

package install

// End-to-end tests of the plugkit binary: a real `plugkit serve` process,
// two installing processes at once, and consent typed on a real terminal.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/internal/testservice"
)

// serve starts `plugkit serve` on a free port of 127.0.0.1 with a
// publisher and a reader token, and returns its URL (the one it prints
// once listening).
func serve(t *testing.T, bin string) string {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "PLUGKIT_PUBLISH_TOKENS="+publishToken, "PLUGKIT_READ_TOKENS="+readToken)
	_, url := testservice.StartServe(t, cmd)
	return url
}

// cli runs the binary with the reader token in the environment and
// returns its exit code, stdout and stderr.
func cli(t *testing.T, bin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "PLUGKIT_TOKEN="+readToken)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// TestE2EServeInstallUpdateSync: install from a real plugkit serve with
// --report, update with and without consent, and sync a second home from
// the lock alone.
func TestE2EServeInstallUpdateSync(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the plugkit binary")
	}
	bin := crashBinary(t)
	url := serve(t, bin)
	reg := &testRegistry{URL: url}
	v1 := plugin{name: "notes", version: "1.0.0", skills: map[string]string{"jot": "Jot."}}
	reg.publish(t, v1, "")
	dir := t.TempDir()
	home1, home2 := filepath.Join(dir, "home1"), filepath.Join(dir, "home2")

	code, out, errOut := cli(t, bin, "install", "notes", "--registry", url, "--home", home1, "--yes", "--report", "--json")
	if code != 0 {
		t.Fatalf("install: %d %s %s", code, out, errOut)
	}
	var res Result
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Changes[0].Report != "reported" {
		t.Fatalf("install document: %v %s", err, out)
	}

	v2 := v1
	v2.version = "2.0.0"
	v2.mcp = mcpJSON(map[string]string{"api": `{"type": "streamable-http", "url": "https://notes.example.com/mcp", "headers": {"Authorization-Scope": "read"}}`})
	d2 := reg.publish(t, v2, "")
	code, out, errOut = cli(t, bin, "update", "--home", home1)
	if code != 1 || !strings.Contains(out, "server api added") || !strings.Contains(errOut, "--yes") {
		t.Fatalf("update without consent: %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = cli(t, bin, "update", "--home", home1, "--yes", "--report")
	if code != 0 || !strings.Contains(out, "updated notes 1.0.0 -> 2.0.0") {
		t.Fatalf("update: %d\n%s\n%s", code, out, errOut)
	}
	c := &distribution.Client{BaseURL: url, Token: readToken}
	var list distribution.Installations
	if err := c.Request(context.Background(), "GET", "/installations", nil, &list); err != nil ||
		len(list.Installations) != 1 || list.Installations[0].Status != "updated" || list.Installations[0].ArtifactDigest != d2 {
		t.Fatalf("installations: %+v %v", list, err)
	}

	if err := os.MkdirAll(home2, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(home2, LockFile), readFile(t, filepath.Join(home1, LockFile)))
	code, out, errOut = cli(t, bin, "sync", "--home", home2)
	if code != 0 || !strings.Contains(out, "restored notes 2.0.0") {
		t.Fatalf("sync: %d\n%s\n%s", code, out, errOut)
	}
	s1, s2 := snapshotHome(t, filepath.Join(home1, "store")), snapshotHome(t, filepath.Join(home2, "store"))
	if !s1.equal(s2) {
		t.Fatalf("stores differ: %s", s1.diff(s2))
	}
	code, out, _ = cli(t, bin, "check", "--home", home2)
	if code != 0 || out != "notes: ok\n" {
		t.Fatalf("check: %d %s", code, out)
	}
}

// TestE2ETwoProcessesInstall: two plugkit processes installing into one
// home at once both succeed; the second waits for the first.
func TestE2ETwoProcessesInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the plugkit binary")
	}
	bin := crashBinary(t)
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	var cmds []*exec.Cmd
	for _, name := range []string{"one", "two", "three"} {
		p := plugin{name: name, version: "1", files: map[string]string{"big": strings.Repeat(name, 1<<18)}}
		cmd := exec.Command(bin, "install", p.writeDir(t, filepath.Join(dir, name)), "--home", home, "--yes")
		var errb strings.Builder
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		defer func() {
			if t.Failed() {
				t.Log(errb.String())
			}
		}()
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%v: %v", cmd.Args, err)
		}
	}
	h := openHome(t, home)
	if l, _ := h.List(); len(l) != 3 {
		t.Fatalf("listed %d plugins", len(l))
	}
	assertClean(t, h)
}

// TestE2EConsentOnTerminal: on a real terminal (a pty from script(1)),
// install shows what the plugin may run and installs on "y".
func TestE2EConsentOnTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the plugkit binary")
	}
	script := testservice.Binary(t, "script", "Debian package util-linux")
	bin := crashBinary(t)
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	src := kvV1().writeDir(t, filepath.Join(dir, "kv"))
	cmd := exec.Command(script, "-q", "-e", "-c", bin+" install "+src+" --home "+home, "/dev/null")
	cmd.Stdin = strings.NewReader("y\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Install kv? [y/N]") || !strings.Contains(string(out), "db (stdio): ./bin/db") ||
		!strings.Contains(string(out), "installed kv 1.0.0") {
		t.Fatalf("terminal session:\n%s", out)
	}
	if l, _ := openHome(t, home).List(); len(l) != 1 {
		t.Fatal("not installed")
	}
}
