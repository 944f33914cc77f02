package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/internal/cli/clitest"
	"github.com/plugkit/plugkit/internal/testbin"
)

// runBin runs a built binary and returns its exit code and output.
func runBin(t *testing.T, bin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	c := exec.Command(bin, args...)
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("%s %v: %v", bin, args, err)
		}
		code = ee.ExitCode()
	}
	return code, out.String(), errb.String()
}

// TestFullHelpIsTheSame: plugkit's help lists plugkit-full's verbs from its
// table, byte for byte as plugkit-full lists its own, so the table cannot
// drift from the verbs; the help of a verb of plugkit-full, and its
// completions, come from plugkit-full whichever way they are asked.
func TestFullHelpIsTheSame(t *testing.T) {
	light := testbin.Plugkit(t)
	full := filepath.Join(filepath.Dir(light), "plugkit-full")
	for _, args := range [][]string{
		{"--help"},
		{"help"},
		{"help", "key"},
		{"help", "serve", "token"},
		{"key", "--help"},
		{"serve", "token", "add", "-h"},
		{"__complete", ""},
		{"__complete", "serve", ""},
		{"__completeNoDesc", "key", ""},
		{"__complete", "install", "--"},
	} {
		lc, lout, lerr := runBin(t, light, args...)
		fc, fout, ferr := runBin(t, full, args...)
		if lc != 0 || lc != fc || lout != fout || lerr != ferr {
			t.Errorf("plugkit %v differs from plugkit-full's:\nexit %d / %d\n--- plugkit\n%s%s--- plugkit-full\n%s%s", args, lc, fc, lout, lerr, fout, ferr)
		}
	}
	_, out, _ := runBin(t, light, "--help")
	for _, v := range fullVerbs {
		if !strings.Contains(out, "\n  "+v.name+" ") {
			t.Errorf("plugkit --help does not list %s:\n%s", v.name, out)
		}
	}
}

// TestFullExitStatusAndOutput: a verb of plugkit-full run through plugkit
// ends with plugkit-full's exit status and prints what plugkit-full
// prints, on success and on each kind of failure, with and without --json.
func TestFullExitStatusAndOutput(t *testing.T) {
	light := testbin.Plugkit(t)
	full := filepath.Join(filepath.Dir(light), "plugkit-full")
	home := t.TempDir()
	for _, args := range [][]string{
		{"list", "--home", home, "--json"},
		{"list", "--home", home},
		{"verify", filepath.Join(t.TempDir(), "missing"), "--key", "k.pub", "--json"},
		{"remove", "nosuch", "--home", home, "--json"},
		{"remove", "nosuch", "--home", home},
		{"key", "nosuch"},
		{"install", "--nosuch-flag"},
	} {
		lc, lout, lerr := runBin(t, light, args...)
		fc, fout, ferr := runBin(t, full, args...)
		if lc != fc || lout != fout || lerr != ferr {
			t.Errorf("plugkit %v: exit %d, want plugkit-full's %d\n--- plugkit\n%s%s--- plugkit-full\n%s%s", args, lc, fc, lout, lerr, fout, ferr)
		}
	}
	if code, _, _ := runBin(t, light, "remove", "nosuch", "--home", home); code != ExitFailed {
		t.Errorf("remove of a plugin not installed: exit %d, want %d", code, ExitFailed)
	}
}

// TestFullStdioAndProcess: plugkit replaces itself with plugkit-full
// (same process, which a client of the stdio gateway sees as one MCP
// server): stdin reaches plugkit-full, its answers reach stdout, and the
// process ends with its status when stdin closes.
func TestFullStdioAndProcess(t *testing.T) {
	light := testbin.Plugkit(t)
	cmd := exec.Command(light, "gateway", "--home", t.TempDir())
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	line, err := bufio.NewReader(out).ReadBytes('\n')
	var answer struct {
		ID     int
		Result struct{ ServerInfo struct{ Name string } }
	}
	if err != nil || json.Unmarshal(line, &answer) != nil || answer.ID != 1 || answer.Result.ServerInfo.Name == "" {
		t.Errorf("initialize through plugkit: %v %q", err, line)
	}
	if runtime.GOOS == "linux" {
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", cmd.Process.Pid))
		if err != nil || filepath.Base(exe) != "plugkit-full" {
			t.Errorf("process %d runs %q (%v), want plugkit-full in place of plugkit", cmd.Process.Pid, exe, err)
		}
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("gateway after stdin closed: %v", err)
	}
}

// TestFullMissing: without plugkit-full beside it, plugkit runs its own
// verbs, and refuses plugkit-full's with exit 2 and one line that names
// the verb, where plugkit looked and how to install it; with --json, one
// failure document.
func TestFullMissing(t *testing.T) {
	alone := testbin.Build(t, "github.com/plugkit/plugkit/cmd/plugkit") // a directory of its own
	if _, err := os.Stat(filepath.Join(filepath.Dir(alone), "plugkit-full")); err == nil {
		t.Fatal("plugkit-full is beside the plugkit built alone")
	}
	if code, out, errOut := runBin(t, alone, "validate", clitest.ExamplePlugin); code != 0 {
		t.Fatalf("validate without plugkit-full: exit %d\n%s%s", code, out, errOut)
	}
	want := filepath.Join(filepath.Dir(alone), "plugkit-full")
	for _, c := range []struct {
		verb string
		args []string
	}{
		{"list", []string{"list"}},
		{"serve", []string{"serve", "--addr", "127.0.0.1:0"}},
		{"key", []string{"help", "key"}},
		{"key", []string{"key", "--help"}},
		{"install", []string{"__complete", "install", ""}},
	} {
		code, out, errOut := runBin(t, alone, c.args...)
		if code != ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, fmt.Sprintf("%q is a verb of plugkit-full", c.verb)) ||
			!strings.Contains(errOut, want) || !strings.Contains(errOut, "go install github.com/plugkit/plugkit/cmd/...@latest") {
			t.Errorf("plugkit %v without plugkit-full: exit %d\nstdout %q\nstderr %q", c.args, code, out, errOut)
		}
	}
	code, out, errOut := runBin(t, alone, "install", "x", "--json")
	var doc ErrorDoc
	clitest.DecodeOne(t, out, &doc)
	if code != ExitUsage || doc.Error.Code != CodeIO || !strings.Contains(doc.Error.Message, `"install" is a verb of plugkit-full`) || !strings.HasPrefix(errOut, "plugkit: ") {
		t.Errorf("install --json without plugkit-full: exit %d, %+v, stderr %q", code, doc, errOut)
	}
}

// TestLightLinksNoHeavyPackage: the light plugkit links none of the
// packages whose initialisers made every verb start slowly; plugkit-full
// links them all (so the check would see them).
func TestLightLinksNoHeavyPackage(t *testing.T) {
	heavy := []string{"github.com/sigstore/sigstore-go/", "github.com/minio/minio-go/", "github.com/prometheus/client_golang/",
		"modernc.org/sqlite", "github.com/jackc/pgx/", "github.com/modelcontextprotocol/"}
	deps := func(pkg string) string {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return string(out)
	}
	light, full := deps("github.com/plugkit/plugkit/cmd/plugkit"), deps("github.com/plugkit/plugkit/cmd/plugkit-full")
	// Dropped for start-up: the progress bar library, whose dependencies
	// compiled regexps and built width tables at every start.
	for _, d := range []string{"github.com/vbauerster/mpb/", "github.com/mattn/go-runewidth", "github.com/acarl005/stripansi"} {
		if strings.Contains(light, "\n"+d) || strings.Contains(full, "\n"+d) {
			t.Errorf("plugkit links %s again", d)
		}
	}
	for _, h := range heavy {
		if strings.Contains(light, "\n"+h) {
			t.Errorf("cmd/plugkit links %s", h)
		}
		if !strings.Contains(full, "\n"+h) {
			t.Errorf("cmd/plugkit-full does not link %s: is the list out of date?", h)
		}
	}
}

// TestFullThroughSymlink: plugkit run through a symbolic link (as in
// ~/bin/plugkit) finds the plugkit-full beside the file it links to, and
// none in the link's own directory or on PATH.
func TestFullThroughSymlink(t *testing.T) {
	light := testbin.Plugkit(t)
	link := filepath.Join(t.TempDir(), "plugkit")
	if err := os.Symlink(light, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	t.Setenv("PATH", "")
	if code, out, errOut := runBin(t, link, "list", "--home", t.TempDir(), "--json"); code != 0 || !strings.Contains(out, `"plugins": []`) {
		t.Errorf("plugkit list through a link: exit %d\n%s%s", code, out, errOut)
	}
}
