package install

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/plugkit/plugkit/internal/testtree"
	"github.com/plugkit/plugkit/source"
)

const manifestFmt = `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": %q, "version": %q}`

// plugin describes a test plugin: name, version, skills and mcp.json.
type plugin struct {
	name, version string
	skills        map[string]string // skill name -> body
	mcp           string            // mcp.json, "" for none
	files         map[string]string // other files (testtree syntax)
}

func (p plugin) entries() map[string]string {
	e := map[string]string{"plugin.json": fmt.Sprintf(manifestFmt, p.name, p.version)}
	for name, body := range p.skills {
		e["skills/"+name+"/SKILL.md"] = "---\nname: " + name + "\ndescription: Test skill " + name + ".\n---\n" + body + "\n"
	}
	if p.mcp != "" {
		e["mcp.json"] = p.mcp
	}
	for k, v := range p.files {
		e[k] = v
	}
	return e
}

// writeDir writes the plugin as the directory dir (replacing what was
// there) and returns dir.
func (p plugin) writeDir(t testing.TB, dir string) string {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	testtree.Write(t, dir, p.entries())
	return dir
}

// mcpJSON builds an mcp.json from server name -> JSON object text.
func mcpJSON(servers map[string]string) string {
	var parts []string
	for name, v := range servers {
		parts = append(parts, fmt.Sprintf("%q: %s", name, v))
	}
	sort.Strings(parts)
	return `{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {` + strings.Join(parts, ", ") + `}}`
}

func openHome(t testing.TB, dir string) *Home {
	t.Helper()
	h, err := Open(dir, Options{Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func pathSource(p string) source.Source { return source.Source{Kind: source.Path, Path: p} }

// yes consents to everything and counts the questions.
func yes(n *int) ConsentFunc {
	return func(context.Context, *Change) (bool, error) { *n++; return true, nil }
}

func mustInstall(t testing.TB, h *Home, srcs ...source.Source) *Result {
	t.Helper()
	var n int
	res, err := h.Install(context.Background(), srcs, InstallOptions{Consent: yes(&n)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
