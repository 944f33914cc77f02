package agentplugin_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
)

var update = flag.Bool("update", false, "rewrite the expected results of the corpus")

// verdict is what a corpus case expects of Load: the whole observable
// result, diagnostics included with their positions.
type verdict struct {
	Loaded               bool     `json:"loaded"`
	MCP                  string   `json:"mcp,omitempty"`
	Skills               []string `json:"skills"`
	Servers              []string `json:"servers"`
	Extensions           []string `json:"extensions"`
	ExtensionDirectories []string `json:"extensionDirectories"`
	Diagnostics          []string `json:"diagnostics"`
}

func verdictOf(pkg *agentplugin.Package, err error) (verdict, error) {
	v := verdict{Skills: []string{}, Servers: []string{}, Extensions: []string{}, ExtensionDirectories: []string{}, Diagnostics: []string{}}
	ds, rejected := agentplugin.Diagnostics(err)
	if err != nil && !rejected {
		return v, err
	}
	if pkg != nil {
		v.Loaded = true
		v.MCP = string(pkg.MCP)
		for _, s := range pkg.Skills {
			v.Skills = append(v.Skills, s.ID)
		}
		for _, s := range pkg.Servers {
			v.Servers = append(v.Servers, s.ID)
		}
		v.Extensions = append(v.Extensions, pkg.Extensions...)
		v.ExtensionDirectories = append(v.ExtensionDirectories, pkg.ExtensionDirectories...)
		ds = pkg.Diagnostics
	}
	for _, d := range ds {
		v.Diagnostics = append(v.Diagnostics, fmt.Sprintf("%s %s %s %s %d:%d", d.Severity, d.Code, d.Path, d.Pointer, d.Line, d.Column))
	}
	return v, nil
}

// TestCorpus loads every plugin under testdata/corpus/*/plugin and compares
// the verdict with the case's expect.json. Each case's README says which
// rule it covers. Run with -update to rewrite expect.json, then review the
// diff: the expectations are the specification, not the code's output.
func TestCorpus(t *testing.T) {
	cases, err := filepath.Glob("testdata/corpus/*")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			got, err := verdictOf(agentplugin.LoadDir(filepath.Join(dir, "plugin"), agentplugin.Options{}))
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "expect.json")
			if *update {
				b, _ := json.MarshalIndent(got, "", "  ")
				if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var want verdict
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", "  ")
				t.Errorf("verdict differs from %s:\n%s", file, g)
			}
		})
	}
}
