package build

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/docs"
	"github.com/plugkit/plugkit/internal/hostile"
)

const sarifSchema = "../../../../../shared/spec/sarif/sarif-schema-2.1.0.json"

// sarifLog is the part of a SARIF log the tests read.
type sarifLog struct {
	Version string `json:"version"`
	Runs    []struct {
		ColumnKind string `json:"columnKind"`
		Tool       struct {
			Driver struct {
				Name  string `json:"name"`
				Rules []struct {
					ID               string `json:"id"`
					HelpURI          string `json:"helpUri"`
					ShortDescription struct{ Text string }
					Help             struct{ Text, Markdown string }
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []sarifResult `json:"results"`
	} `json:"runs"`
}

type sarifResult struct {
	RuleID    string `json:"ruleId"`
	RuleIndex int    `json:"ruleIndex"`
	Level     string `json:"level"`
	Message   struct{ Text string }
	Locations []struct {
		PhysicalLocation struct {
			ArtifactLocation struct{ URI string } `json:"artifactLocation"`
			Region           *struct {
				StartLine   int `json:"startLine"`
				StartColumn int `json:"startColumn"`
			} `json:"region"`
		} `json:"physicalLocation"`
	} `json:"locations"`
}

// TestValidateSARIFCorpus: the SARIF log of every corpus plugin, in one
// run, is valid against the official SARIF 2.1.0 schema, has one rule per
// documented code, and one result per diagnostic that names its rule by
// index and locates it relative to the current directory.
func TestValidateSARIFCorpus(t *testing.T) {
	if _, err := os.Stat(sarifSchema); err != nil {
		t.Skipf("SARIF 2.1.0 schema not found at %s (../shared is absent): %v", sarifSchema, err)
	}
	schemaPath, _ := filepath.Abs(sarifSchema)
	schema, err := jsonschema.NewCompiler().Compile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir("../../../..") // the repository root, as in a CI job
	dirs, _ := filepath.Glob("agentplugin/testdata/corpus/*/plugin")
	if len(dirs) < 50 {
		t.Fatalf("corpus has %d plugins", len(dirs))
	}
	code, out, errOut := plugkit(t, append([]string{"validate", "--format", "sarif"}, dirs...)...)
	if code != command.ExitFailed {
		t.Fatalf("exit %d, want 1 (the corpus has errors): %s", code, errOut)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(inst); err != nil {
		t.Fatalf("SARIF log is not valid against the 2.1.0 schema: %v", err)
	}
	var log sarifLog
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || log.Runs[0].Tool.Driver.Name != "plugkit" || log.Runs[0].ColumnKind != "utf16CodeUnits" {
		t.Fatalf("not one plugkit run: %+v", log)
	}
	run := log.Runs[0]
	rules := map[string]int{}
	for i, r := range run.Tool.Driver.Rules {
		rules[r.ID] = i
		if !strings.HasPrefix(r.HelpURI, diagnosticsURL+"#") || r.ShortDescription.Text == "" || r.Help.Text == "" || r.Help.Markdown == "" {
			t.Errorf("rule %s lacks help: %+v", r.ID, r)
		}
	}
	for _, c := range docs.DiagnosticCodes() {
		if _, ok := rules[c.Code]; !ok {
			t.Errorf("no rule for documented code %s", c.Code)
		}
	}
	want := 0
	for _, d := range dirs {
		var expect struct{ Diagnostics []json.RawMessage }
		b, err := os.ReadFile(filepath.Join(filepath.Dir(d), "expect.json"))
		if err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(b, &expect)
		want += len(expect.Diagnostics)
	}
	if len(run.Results) != want {
		t.Errorf("%d results, want %d (one per diagnostic of the corpus)", len(run.Results), want)
	}
	for _, r := range run.Results {
		if i, ok := rules[r.RuleID]; !ok || i != r.RuleIndex {
			t.Errorf("result %s names rule index %d, want %d", r.RuleID, r.RuleIndex, i)
		}
		if r.Level != "error" && r.Level != "warning" || len(r.Locations) != 1 {
			t.Errorf("result %+v", r)
		}
		if uri := r.Locations[0].PhysicalLocation.ArtifactLocation.URI; !strings.HasPrefix(uri, "agentplugin/testdata/corpus/") {
			t.Errorf("uri %q is not relative to the current directory", uri)
		}
	}
	// One expected result in full: the cwd that escapes the root.
	found := false
	for _, r := range run.Results {
		l := r.Locations[0].PhysicalLocation
		found = found || r.RuleID == "mcp-cwd-escapes-root" && r.Level == "error" &&
			l.ArtifactLocation.URI == "agentplugin/testdata/corpus/mcp-cwd-forms/plugin/mcp.json" && l.Region != nil && l.Region.StartLine > 0
	}
	if !found {
		t.Error("no located mcp-cwd-escapes-root result for mcp-cwd-forms")
	}
}

// TestValidateSARIFLocations: paths are relative to the current directory
// or --sarif-root, percent-encoded; columns count UTF-16 code units; an
// archive's diagnostics point at the archive with their inner position in
// the message.
func TestValidateSARIFLocations(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "my plugins", "demo")
	os.MkdirAll(filepath.Join(dir, "skills", "b"), 0o755)
	os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(testManifest), 0o644)
	// "é" is 2 bytes and 1 UTF-16 unit, "😀" 4 bytes and 2 units: the
	// name starts at byte 17, character unit 14.
	os.WriteFile(filepath.Join(dir, "skills", "b", "SKILL.md"), []byte("---\ndescription: é😀x\nname: other\n---\n"), 0o644)
	t.Chdir(root)
	_, out, _ := plugkit(t, "validate", "--format", "sarif", "my plugins/demo")
	var log sarifLog
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	r := findResult(t, log, "skill-name-mismatch")
	l := r.Locations[0].PhysicalLocation
	if l.ArtifactLocation.URI != "my%20plugins/demo/skills/b/SKILL.md" || l.Region.StartLine != 3 || l.Region.StartColumn != 7 {
		t.Errorf("location %+v %+v", l.ArtifactLocation, l.Region)
	}

	_, out, _ = plugkit(t, "validate", "--format", "sarif", "--sarif-root", "my plugins", "my plugins/demo")
	log = sarifLog{}
	json.Unmarshal([]byte(out), &log)
	if uri := findResult(t, log, "skill-name-mismatch").Locations[0].PhysicalLocation.ArtifactLocation.URI; uri != "demo/skills/b/SKILL.md" {
		t.Errorf("--sarif-root: uri %q", uri)
	}

	os.Mkdir(filepath.Join(root, "elsewhere"), 0o755)
	_, out, _ = plugkit(t, "validate", "--format", "sarif", "--sarif-root", "elsewhere", "my plugins/demo")
	log = sarifLog{}
	json.Unmarshal([]byte(out), &log)
	if uri := findResult(t, log, "skill-name-mismatch").Locations[0].PhysicalLocation.ArtifactLocation.URI; !strings.HasPrefix(uri, "file:///") || !strings.HasSuffix(uri, "/my%20plugins/demo/skills/b/SKILL.md") {
		t.Errorf("outside --sarif-root: uri %q, want an absolute file URI", uri)
	}

	// A column after non-ASCII text on its own line.
	os.WriteFile(filepath.Join(dir, "skills", "b", "SKILL.md"), []byte("---\nname: other\ndescription: ok\nmetadata: {\"é😀\": [1]}\n---\n"), 0o644)
	_, out, _ = plugkit(t, "validate", "--format", "sarif", "my plugins/demo")
	log = sarifLog{}
	json.Unmarshal([]byte(out), &log)
	if r := findResult(t, log, "skill-metadata-invalid"); r.Locations[0].PhysicalLocation.Region == nil {
		t.Errorf("no region: %+v", r)
	}

	// A rejected directory leaves no snapshot: its file is read back to
	// count the column in UTF-16 units (27 in bytes).
	rejected := filepath.Join(root, "rejected")
	os.Mkdir(rejected, 0o755)
	os.WriteFile(filepath.Join(rejected, "plugin.json"), []byte(`{"description": "é😀", x}`), 0o644)
	_, out, _ = plugkit(t, "validate", "--format", "sarif", "./rejected")
	log = sarifLog{}
	json.Unmarshal([]byte(out), &log)
	if l := findResult(t, log, "manifest-json-invalid").Locations[0].PhysicalLocation; l.ArtifactLocation.URI != "rejected/plugin.json" || l.Region == nil || l.Region.StartLine != 1 || l.Region.StartColumn != 24 {
		t.Errorf("rejected directory: location %+v %+v", l.ArtifactLocation, l.Region)
	}

	archive := filepath.Join(root, "demo.tar.gz")
	if code, _, errOut := plugkit(t, "pack", "my plugins/demo", "-o", archive, "--allow-errors"); code != 0 {
		t.Fatal(errOut)
	}
	_, out, _ = plugkit(t, "validate", "--format", "sarif", "demo.tar.gz")
	log = sarifLog{}
	json.Unmarshal([]byte(out), &log)
	r = findResult(t, log, "skill-name-mismatch")
	if l := r.Locations[0].PhysicalLocation; l.ArtifactLocation.URI != "demo.tar.gz" || l.Region != nil ||
		!strings.HasPrefix(r.Message.Text, "skills/b/SKILL.md:2:7: ") {
		t.Errorf("archive result %+v", r)
	}

	for _, args := range [][]string{
		{"validate", "--format", "xml", "demo.tar.gz"},
		{"validate", "--json", "--format", "sarif", "demo.tar.gz"},
		{"validate", "--sarif-root", ".", "demo.tar.gz"},
		{"validate", "--format", "sarif", "--sarif-root", "nosuch", "demo.tar.gz"},
	} {
		if code, _, errOut := plugkit(t, args...); code != command.ExitUsage || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

func findResult(t *testing.T, log sarifLog, rule string) sarifResult {
	t.Helper()
	for _, r := range log.Runs[0].Results {
		if r.RuleID == rule {
			return r
		}
	}
	t.Fatalf("no %s result in %+v", rule, log.Runs[0].Results)
	return sarifResult{}
}

// TestGitHubAnnotations: one workflow command per diagnostic, with the
// characters GitHub reserves escaped, then the summary lines.
func TestGitHubAnnotations(t *testing.T) {
	for in, want := range map[string]string{
		"100% done\r\nnext": "100%25 done%0D%0Anext",
		"a:b,c":             "a:b,c",
	} {
		if got := escapeData(in); got != want {
			t.Errorf("escapeData(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"a:b,c%\r\n": "a%3Ab%2Cc%25%0D%0A",
		"dir/x.json": "dir/x.json",
	} {
		if got := escapeProperty(in); got != want {
			t.Errorf("escapeProperty(%q) = %q, want %q", in, got, want)
		}
	}

	root := t.TempDir()
	dir := filepath.Join(root, "a,b:c")
	os.MkdirAll(filepath.Join(dir, "skills", "b"), 0o755)
	os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(testManifest), 0o644)
	os.WriteFile(filepath.Join(dir, "skills", "b", "SKILL.md"), []byte("---\nname: other\ndescription: x\n---\n"), 0o644)
	t.Chdir(root)
	code, out, _ := plugkit(t, "validate", "--format", "github", "./a,b:c")
	want := "::error file=a%2Cb%3Ac/skills/b/SKILL.md,line=2,col=7,title=skill-name-mismatch::"
	if code != command.ExitFailed || !strings.HasPrefix(out, want) ||
		!strings.HasSuffix(out, "\ndemo 0.1.0: loaded with errors: 0 skills, 0 MCP servers, MCP absent (1 error, 0 warnings)\n") {
		t.Errorf("exit %d\n%s\nwant prefix %s", code, out, want)
	}
	if strings.Count(out, "\n") != 2 {
		t.Errorf("want one annotation and one summary:\n%s", out)
	}
}

// TestSARIFCostIsLinear: diagnostics in a large file cost the SARIF
// writer the file's size (one line index) plus the diagnostics, never their
// product. From 1 MiB with 1,000 diagnostics to 16 MiB with 16,000, CPU
// time and allocations grow about 16 times (hostile.Linear); a writer that
// rescanned the file per diagnostic would grow 256 times. (The loader's
// own cost is its tests'.)
func TestSARIFCostIsLinear(t *testing.T) {
	dir := t.TempDir()
	write := func(mib int) func() {
		line := strings.Repeat("é", 20) + "x\n" // non-ASCII, so columns are converted
		content := []byte(strings.Repeat(line, mib<<20/len(line)))
		lines, n := len(content)/len(line), 1000*mib
		r := &ValidateReport{Path: dir, dir: dir, files: map[string][]byte{"plugin.json": content}}
		for i := range n {
			r.Diagnostics = append(r.Diagnostics, agentplugin.Diagnostic{Severity: agentplugin.Warning,
				Code: "manifest-unknown-field", Path: "plugin.json", Line: 1 + i*(lines/n), Column: 41, Message: "m"})
		}
		return func() {
			if err := writeSARIF(io.Discard, []*ValidateReport{r}, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	hostile.Linear(t, "SARIF", 16, write(1), write(16))
}
