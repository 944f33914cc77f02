package agentplugin_test

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/snapshot"
)

// TestLoadPartialMatchesLoad is the differential of the pack path over
// every corpus plugin: reading it with only the files the loader reads
// held (ReadsContent) gives the verdict of Load of the whole snapshot,
// diagnostics and positions included, and PackPartialTo writes the bytes
// PackTo writes of the whole snapshot. It is what proves that the loader
// judges every other file by its path and mode alone.
func TestLoadPartialMatchesLoad(t *testing.T) {
	cases, err := filepath.Glob("testdata/corpus/*/plugin")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, dir := range cases {
		t.Run(filepath.Base(filepath.Dir(dir)), func(t *testing.T) {
			full, err := snapshot.ReadDir(dir, snapshot.Options{})
			if err != nil {
				t.Fatal(err)
			}
			want, err := verdictOf(agentplugin.Load(full, agentplugin.Options{}))
			if err != nil {
				t.Fatal(err)
			}
			part, err := snapshot.ReadPartial(dir, snapshot.Options{}, agentplugin.ReadsContent)
			if err != nil {
				t.Fatal(err)
			}
			defer part.Close()
			got, err := verdictOf(agentplugin.LoadPartial(part, agentplugin.Options{}))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("verdict %+v, want %+v", got, want)
			}
			for p := range part.Held.Files {
				if !agentplugin.ReadsContent(p) {
					t.Errorf("%s held, but the loader does not read it", p)
				}
			}
			var a, b bytes.Buffer
			if err := archive.PackTo(&a, full, archive.PackOptions{Root: "p"}); err != nil {
				t.Fatal(err)
			}
			if err := archive.PackPartialTo(&b, part, archive.PackOptions{Root: "p"}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Error("PackPartialTo and PackTo wrote different bytes")
			}
		})
	}
}

// A file the loader reads is never taken for empty: LoadPartial of a read
// that deferred it is an error naming it.
func TestLoadPartialRefusesDeferredContent(t *testing.T) {
	for _, p := range []string{"plugin.json", "mcp.json", "skills/x/SKILL.md"} {
		part, err := snapshot.ReadPartial("testdata/corpus/mcp-stdio-full/plugin", snapshot.Options{}, func(q string) bool {
			return agentplugin.ReadsContent(q) && q != p
		})
		if err != nil {
			t.Fatal(err)
		}
		defer part.Close()
		if _, ok := part.Deferred[p]; !ok {
			part.Deferred[p] = snapshot.DeferredFile{Size: 1}
		}
		if _, err := agentplugin.LoadPartial(part, agentplugin.Options{}); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s deferred: err = %v, want an error naming it", p, err)
		}
	}
}

func TestReadsContent(t *testing.T) {
	for p, want := range map[string]bool{
		"plugin.json":             true,
		"mcp.json":                true,
		"skills/a/SKILL.md":       true,
		"skills/a/skill.md":       false,
		"skills/SKILL.md":         false,
		"skills/a/b/SKILL.md":     false,
		"skills/a/notes.md":       false,
		"sub/plugin.json":         false,
		"com.example/plugin.json": false,
		"bin/tool":                false,
	} {
		if got := agentplugin.ReadsContent(p); got != want {
			t.Errorf("ReadsContent(%q) = %v, want %v", p, got, want)
		}
	}
}
