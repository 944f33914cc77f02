package source

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry"
	"github.com/plugkit/plugkit/snapshot"

	"github.com/plugkit/plugkit/registry/storage"
)

const manifest = `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "demo", "version": "1.0.0"}`

func demoSnapshot(t *testing.T) *snapshot.Snapshot {
	t.Helper()
	s, err := snapshot.FromFiles(map[string][]byte{
		"plugin.json":           []byte(manifest),
		"skills/hello/SKILL.md": []byte("---\nname: hello\ndescription: Says hello.\n---\nHello.\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestOpenDirectoryAndArchive(t *testing.T) {
	dir := t.TempDir()
	if err := snapshot.WriteDir(filepath.Join(dir, "demo"), demoSnapshot(t)); err != nil {
		t.Fatal(err)
	}
	b, err := archive.Pack(demoSnapshot(t), archive.PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	arc := filepath.Join(dir, "demo-1.0.0.tar.gz")
	if err := os.WriteFile(arc, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	p, err := Open(ctx, Source{Kind: Path, Path: filepath.Join(dir, "demo")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Package.Name != "demo" || p.Archive != nil || p.Identity != "" || p.Dir == "" || len(p.Package.Skills) != 1 {
		t.Errorf("directory: %+v", p)
	}

	p, err = Open(ctx, Source{Kind: Path, Path: arc}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Package.Name != "demo" || p.Identity != archive.Digest(b) || len(p.Archive) != len(b) {
		t.Errorf("archive: identity %s, want %s", p.Identity, archive.Digest(b))
	}
}

func TestOpenRefusals(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// A plugin's own file given instead of its directory: the directory
	// that holds plugin.json is named, and no archive error is.
	pluginJSON := write("plugin.json", []byte(manifest))
	skillMD := filepath.Join(dir, "skills", "demo", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(skillMD), 0o755); err != nil {
		t.Fatal(err)
	}
	write("skills/demo/SKILL.md", []byte("---\nname: demo\n---\n"))
	for _, path := range []string{pluginJSON, skillMD} {
		_, err := Open(ctx, Source{Kind: Path, Path: path}, Options{})
		if !errors.Is(err, ErrPluginFile) || errors.Is(err, ErrArchive) ||
			!strings.HasSuffix(err.Error(), "give the plugin's directory "+dir) || strings.Contains(err.Error(), "gzip") {
			t.Errorf("%s: %v", path, err)
		}
	}
	// Without a plugin.json above it, no directory is named.
	lone := filepath.Join(t.TempDir(), "notes.md")
	if err := os.WriteFile(lone, []byte("# notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, Source{Kind: Path, Path: lone}, Options{}); !errors.Is(err, ErrPluginFile) || !strings.HasSuffix(err.Error(), "give the plugin's directory") {
		t.Errorf("notes.md: %v", err)
	}
	// A gzip stream named .json is read as the archive it is.
	if _, err := Open(ctx, Source{Kind: Path, Path: write("odd.json", []byte{0x1f, 0x8b, 0})}, Options{}); !errors.Is(err, ErrArchive) {
		t.Errorf("gzip named .json: %v, want an archive error", err)
	}
	// Larger than the archive limit: refused without reading it all.
	big := write("big.tar.gz", make([]byte, 1000))
	_, err := Open(ctx, Source{Kind: Path, Path: big}, Options{Limits: archive.Limits{MaxArchiveBytes: 999}})
	if !errors.Is(err, snapshot.ErrLimit) {
		t.Errorf("big archive: %v, want ErrLimit", err)
	}
	// A rejected plugin is the loader's error, with diagnostics.
	rejected := filepath.Join(dir, "rejected")
	if err := snapshot.WriteDir(rejected, mustFiles(t, map[string][]byte{"plugin.json": []byte(`{"name": "x"}`)})); err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, Source{Kind: Path, Path: rejected}, Options{})
	if ds, ok := agentplugin.Diagnostics(err); !ok || len(ds) == 0 {
		t.Errorf("rejected plugin: %v", err)
	}
	// Missing path: an I/O error.
	_, err = Open(ctx, Source{Kind: Path, Path: filepath.Join(dir, "missing")}, Options{})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	// Kinds Open does not read.
	_, err = Open(ctx, Source{Kind: Installed, Name: "demo"}, Options{})
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("installed: %v", err)
	}
}

func mustFiles(t *testing.T, files map[string][]byte) *snapshot.Snapshot {
	t.Helper()
	s, err := snapshot.FromFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestOpenRegistry reads a plugin from a real registry server (in process,
// on 127.0.0.1): resolve by channel, download, digest checked, loaded.
func TestOpenRegistry(t *testing.T) {
	db, blobs, err := storage.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv, err := registry.New(registry.Config{Store: db, Blobs: blobs, PublishTokens: []string{"pub"}, AnonymousRead: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	b, err := archive.Pack(demoSnapshot(t), archive.PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pub := &distribution.Client{BaseURL: ts.URL, Token: "pub"}
	if _, err := pub.Publish(ctx, b, ""); err != nil {
		t.Fatal(err)
	}

	src, err := Parse("demo", ParseOptions{Registry: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Open(ctx, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Identity != archive.Digest(b) || p.Release == nil || p.Release.ID != "demo@1.0.0" || p.Package.Name != "demo" {
		t.Errorf("registry: identity %s release %+v", p.Identity, p.Release)
	}
	_, err = Open(ctx, Source{Kind: Registry, Registry: ts.URL, Name: "demo", Channel: "beta"}, Options{})
	var se *distribution.StatusError
	if !errors.As(err, &se) {
		t.Errorf("missing channel: %v, want a StatusError", err)
	}
}
