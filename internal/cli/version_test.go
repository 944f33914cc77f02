package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/internal/cli/clitest"
)

// TestVersion: plugkit version, its --json document and --version all
// come from the build information, with the supported spec versions.
// (Issue 14, item 6.)
func TestVersion(t *testing.T) {
	code, text, _ := plugkit(t, "version")
	if code != 0 || !strings.HasPrefix(text, "plugkit ") || !strings.Contains(text, "agent plugins: 1.0.0\n") ||
		!strings.Contains(text, "go:            "+runtime.Version()+"\n") {
		t.Fatalf("exit %d\n%s", code, text)
	}
	code, out, _ := plugkit(t, "--version")
	if code != 0 || out != text {
		t.Errorf("--version printed %q, want plugkit version's %q", out, text)
	}
	code, out, _ = plugkit(t, "version", "--json")
	var v versionInfo
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil || code != 0 {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	if v.Version == "" || v.Go != runtime.Version() || !slices.Equal(v.SpecVersions, agentplugin.SupportedVersions()) {
		t.Errorf("%+v", v)
	}
	// A build from VCS names its revision; "go test" binaries have none,
	// so the text form is checked on a value.
	v = versionInfo{Version: "v1.2.3", Revision: "abc", Time: "2026-01-02T03:04:05Z", Modified: true, Go: "go1.26.0", SpecVersions: []string{"1.0.0"}}
	want := "plugkit v1.2.3\nrevision:      abc (2026-01-02T03:04:05Z) with uncommitted changes\ngo:            go1.26.0\nagent plugins: 1.0.0\n"
	if got := v.text(); got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
}

// TestEveryGroupRefusesUnknownSubcommands: any command that only groups
// others, now or added later, exits 2 on an unknown subcommand.
func TestEveryGroupRefusesUnknownSubcommands(t *testing.T) {
	root := Program{}.NewRootCmd(nil, nil)
	var groups [][]string
	for _, c := range root.Commands() {
		if c.HasSubCommands() {
			groups = append(groups, []string{c.Name()})
		}
	}
	if len(groups) < 2 {
		t.Fatalf("found groups %v", groups)
	}
	for _, g := range groups {
		args := append(g, "nosuch")
		if code, out, errOut := plugkit(t, args...); code != ExitUsage || !strings.Contains(errOut, "unknown command") {
			t.Errorf("plugkit %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}
}

// TestSuggestionIndent: a mistyped verb's suggestions are indented by a
// tab, as cobra lays them out, not by a printed "\t"; a tab inside a line
// of an error is still escaped.
func TestSuggestionIndent(t *testing.T) {
	code, out, errOut := plugkit(t, "valdate")
	want := "plugkit: unknown command \"valdate\" for \"plugkit\"\n\nDid you mean this?\n\tvalidate\n"
	if code != ExitUsage || out != "" || errOut != want {
		t.Errorf("plugkit valdate: exit %d, stderr %q, want %q", code, errOut, want)
	}
	var b bytes.Buffer
	printError(&b, errors.New("name\tx\n\t\tindented\there"))
	if want := "plugkit: name\\tx\n\t\tindented\\there\n"; b.String() != want {
		t.Errorf("printError: %q, want %q", b.String(), want)
	}
}

// TestValidateHints: the mistakes a newcomer makes get a message that
// says what to do. (Issue 14, item 11.)
func TestValidateHints(t *testing.T) {
	dir := clitest.WritePackPlugin(t, clitest.PackManifest)
	// plugin.json for its directory: the directory is named, the gzip
	// reader's failure is not, and the path is a wrong argument (exit 2).
	code, out, _ := plugkit(t, "validate", dir+"/plugin.json")
	if code != ExitUsage || !strings.Contains(out, "give the plugin's directory "+dir+"\n") || strings.Contains(out, "gzip") || strings.Contains(out, "archive") {
		t.Errorf("plugin.json: exit %d\n%s", code, out)
	}
	code, out, errOut := plugkit(t, "inspect", dir+"/plugin.json", "--json")
	if code != ExitUsage || clitest.ErrorCode(t, out) != CodeUsage || !strings.Contains(errOut, "give the plugin's directory "+dir) {
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
	if code != ExitFailed || !strings.Contains(out, "plugkit pack") {
		t.Errorf("tar czf archive: exit %d\n%s", code, out)
	}
	// unpack says the same, names the user's file, and writes nothing.
	dest := filepath.Join(t.TempDir(), "demo")
	code, out, errOut = plugkit(t, "unpack", file, dest, "--json")
	if code != ExitFailed || clitest.ErrorCode(t, out) != CodeArchive || !strings.Contains(errOut, "plugkit pack") || !strings.Contains(errOut, file) {
		t.Errorf("unpack of a tar czf archive: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Errorf("unpack of a refused archive left %s: %v", dest, err)
	}
}
