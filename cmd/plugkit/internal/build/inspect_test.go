package build

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
)

func TestInspectDirectoryAndArchiveAgree(t *testing.T) {
	archivePath := filepath.Join(t.TempDir(), "rn.tar.gz")
	if code, _, errOut := plugkit(t, "pack", "../../../../examples/release-notes", "-o", archivePath); code != 0 {
		t.Fatalf("pack: %d %s", code, errOut)
	}
	var docs [2]inspectReport
	for i, p := range []string{"../../../../examples/release-notes", archivePath} {
		code, out, errOut := plugkit(t, "inspect", "--json", p)
		if code != 0 {
			t.Fatalf("inspect %s: %d %s", p, code, errOut)
		}
		if err := json.Unmarshal([]byte(out), &docs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if docs[0].Digest != docs[1].Digest || !strings.HasPrefix(docs[0].Digest, "sha256:") || docs[0].Files != docs[1].Files {
		t.Errorf("directory and archive differ: %+v / %+v", docs[0], docs[1])
	}
	if len(docs[0].Skills) != 2 || docs[0].Skills[1].Files[0] != "skills/semver-check/references/rules.md" {
		t.Errorf("skills: %+v", docs[0].Skills)
	}
}

func TestInspectHidesValues(t *testing.T) {
	dir := clitest.WritePlugin(t, map[string]string{
		"plugin.json": testManifest,
		"mcp.json": `{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {
			"a": {"type": "stdio", "command": "node", "env": {"API_KEY": "hunter2"}},
			"b": {"type": "streamable-http", "url": "https://x.example", "headers": {"X-Token": "hunter2"}}}}`,
	})
	for _, args := range [][]string{{"inspect", dir}, {"inspect", "--json", dir}} {
		code, out, _ := plugkit(t, args...)
		if code != 0 || strings.Contains(out, "hunter2") {
			t.Errorf("%v: exit %d, output shows a value:\n%s", args, code, out)
		}
		if args[1] == "--json" && (!strings.Contains(out, "API_KEY") || !strings.Contains(out, "X-Token")) {
			t.Errorf("names missing:\n%s", out)
		}
	}
}

func TestInspectFailures(t *testing.T) {
	rejected := clitest.WritePlugin(t, map[string]string{"plugin.json": `{}`})
	bad := filepath.Join(t.TempDir(), "bad.tar.gz")
	if err := os.WriteFile(bad, []byte("not gzip"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		code int
		msg  string
	}{
		{rejected, 1, "manifest-required-missing"},
		{bad, 1, "invalid archive"},
		{filepath.Join(t.TempDir(), "missing"), 2, "no such file"},
	} {
		code, out, errOut := plugkit(t, "inspect", c.path)
		if code != c.code || !strings.Contains(out+errOut, c.msg) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", c.path, code, out, errOut)
		}
		code, out, _ = plugkit(t, "inspect", "--json", c.path)
		if doc := clitest.DecodeErrorDoc(t, out); code != c.code || doc.Error.Message == "" {
			t.Errorf("%s --json: exit %d, %+v", c.path, code, doc)
		}
	}
}
