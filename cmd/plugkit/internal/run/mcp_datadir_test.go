package run

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpec91_AdhocDataDirKeyedByLocation (PLUGIN_DATA
// is "dedicated to that installed plugin instance", spec 9.1): two plugin
// directories that declare the same name get two PLUGIN_DATA directories
// on an ad-hoc run, never the data/NAME an installed plugin gets.
func TestSpec91_AdhocDataDirKeyedByLocation(t *testing.T) {
	bin := testServerBin(t)
	xdg := t.TempDir()
	t.Setenv("XDG_DATA_HOME", xdg)
	t.Setenv("PLUGKIT_HOME", "")
	servers := `{"good": {"type": "stdio", "command": "./bin/server"}}`
	a, b := writeMCPPlugin(t, bin, servers), writeMCPPlugin(t, bin, servers)
	paths := map[string]string{}
	for _, root := range []string{a, b} {
		code, stdout, stderr := runCLI(t, "mcp", "call", "--json", "--args", `{"name": "who", "content": "`+root+`"}`, root, "good", "write")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var doc struct{ StructuredContent struct{ Path string } }
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatal(err)
		}
		paths[root] = filepath.Dir(doc.StructuredContent.Path)
	}
	if paths[a] == paths[b] {
		t.Fatalf("two plugins named demo share PLUGIN_DATA %s", paths[a])
	}
	for root, dir := range paths {
		want := filepath.Join(xdg, "plugkit", "adhoc") + string(filepath.Separator) + "demo-"
		if !strings.HasPrefix(dir, want) || len(dir) != len(want)+12 {
			t.Errorf("%s: PLUGIN_DATA %s, want %sHEX12", root, dir, want)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "who")); string(got) != root {
			t.Errorf("%s wrote into %s, which holds %q", root, dir, got)
		}
	}
	if _, err := os.Stat(filepath.Join(xdg, "plugkit", "data", "demo")); !os.IsNotExist(err) {
		t.Errorf("an ad-hoc run used data/demo, the installed plugin's directory (%v)", err)
	}
}
