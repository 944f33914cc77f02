package build

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
)

var updateSARIF = flag.Bool("update-sarif", false, "rewrite testdata/sarif/golden.sarif (after a change of docs/diagnostics.md)")

// TestSARIFBytesUnchanged: the SARIF log is byte for byte the one go-sarif
// v3.3.1 wrote before plugkit's own types replaced it
// (testdata/sarif/golden.sarif was first written by that code), so code
// scanning set-ups that diff or cache logs see no change. The reports cover
// what the types must get right: documented and undocumented codes (one
// rule each, however often), warnings and errors, a result with no
// severity, text and pointers that need escaping, a line without a column,
// no line, an archive's inner position, a file outside the root (an
// absolute file URI), a path with a space, and a log with no results. The
// rules come from docs/diagnostics.md: when it changes, -update-sarif
// rewrites the file, whose diff should then touch only rules and indexes.
func TestSARIFBytesUnchanged(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "my plugin")
	manifest := []byte("{\n  \"a\": \"é😀<&>\", \"b\": 1\n}\n")
	d := func(sev agentplugin.Severity, code, path string, line, col int, ptr, msg string) agentplugin.Diagnostic {
		return agentplugin.Diagnostic{Severity: sev, Code: code, Path: path, Line: line, Column: col, Pointer: ptr, Message: msg}
	}
	reports := []*ValidateReport{
		{Path: dir, dir: dir, Loaded: true, files: map[string][]byte{"plugin.json": manifest}, Diagnostics: []agentplugin.Diagnostic{
			d(agentplugin.Warning, "x-undocumented", "plugin.json", 2, 20, "/b<&>\u2028", "undocumented <&> \u2028 \x01 é"),
			d(agentplugin.Error, "x-undocumented", "plugin.json", 2, 0, "", ""),
			d("", "manifest-unknown-field", "plugin.json", 0, 0, "/a", "no line"),
			d(agentplugin.Warning, "y-undocumented", "", 0, 0, "", "no path"),
			d(agentplugin.Error, "manifest-json-invalid", "plugin.json", 3, 2, "", "m"),
		}},
		{Path: "/outside/the root", dir: "/outside/the root", Loaded: true, Diagnostics: []agentplugin.Diagnostic{
			d(agentplugin.Error, "skill-name-mismatch", "skills/b/SKILL.md", 2, 7, "/name", "outside"),
		}},
		{Path: "some/archive.tar.gz", Diagnostics: []agentplugin.Diagnostic{
			d(agentplugin.Error, "skill-name-mismatch", "skills/b/SKILL.md", 2, 7, "", "inner"),
			d(agentplugin.Error, "z-undocumented", "skills/b/SKILL.md", 0, 0, "", "inner, no line"),
		}},
		{Path: "empty.tar.gz"},
	}
	golden, _ := filepath.Abs(filepath.Join("testdata", "sarif", "golden.sarif"))
	t.Chdir(root)
	var got bytes.Buffer
	if err := writeSARIF(&got, reports, ""); err != nil {
		t.Fatal(err)
	}
	if err := writeSARIF(&got, reports[3:], ""); err != nil {
		t.Fatal(err)
	}
	if *updateSARIF {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	gotLines, wantLines := bytes.Split(got.Bytes(), []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := range min(len(gotLines), len(wantLines)) {
		if !bytes.Equal(gotLines[i], wantLines[i]) {
			t.Fatalf("line %d differs from testdata/sarif/golden.sarif (-update-sarif rewrites it after a change of docs/diagnostics.md):\ngot  %s\nwant %s", i+1, gotLines[i], wantLines[i])
		}
	}
	if len(gotLines) != len(wantLines) {
		t.Fatalf("%d lines, want %d as in testdata/sarif/golden.sarif", len(gotLines), len(wantLines))
	}
}
