package install

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/internal/testtree"
	"github.com/plugkit/plugkit/registry"
	"github.com/plugkit/plugkit/snapshot"
	"github.com/plugkit/plugkit/source"

	"github.com/plugkit/plugkit/registry/storage"
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

// Tokens of the test registry.
const (
	publishToken = "publisher-secret"
	readToken    = "reader-secret"
)

// testRegistry is a real registry server (package registry) on 127.0.0.1.
type testRegistry struct {
	URL    string
	server *httptest.Server
	db     interface{ Close() error }
}

// startRegistry starts a registry in process on 127.0.0.1 whose reads
// need readToken.
func startRegistry(t testing.TB) *testRegistry {
	t.Helper()
	db, blobs, err := storage.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := registry.New(registry.Config{Store: db, Blobs: blobs, PublishTokens: []string{publishToken}, ReadTokens: []string{readToken}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); db.Close() })
	return &testRegistry{URL: ts.URL, server: ts, db: db}
}

// publish packs the plugin and publishes it on channel ("" for stable).
func (r *testRegistry) publish(t testing.TB, p plugin, channel string) string {
	t.Helper()
	b := p.pack(t)
	c := &distribution.Client{BaseURL: r.URL, Token: publishToken}
	if _, err := c.Publish(context.Background(), b, channel); err != nil {
		t.Fatal(err)
	}
	return archive.Digest(b)
}

// pack packs the plugin as plugkit pack would.
func (p plugin) pack(t testing.TB) []byte {
	t.Helper()
	b, err := archive.Pack(p.snapshot(t), archive.PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// registryHome opens a home whose registry client reads with readToken.
func registryHome(t testing.TB, dir string) *Home {
	t.Helper()
	h, err := Open(dir, Options{Source: source.Options{Client: &distribution.Client{Token: readToken}}})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// recompress writes the tar inside a .tar.gz again, gzipped at level 1.
func recompress(w io.Writer, b []byte) error {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return err
	}
	tarBytes, err := io.ReadAll(zr)
	if err != nil {
		return err
	}
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	if _, err := zw.Write(tarBytes); err != nil {
		return err
	}
	return zw.Close()
}

// homeState is every entry below a home: path -> mode and content.
type homeState map[string]string

// snapshotHome records the home's entries, except the writer lock file
// (whose content names the last writer).
func snapshotHome(t testing.TB, dir string) homeState {
	t.Helper()
	st := homeState{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == writerFile {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			v += " -> " + target
		}
		st[rel] = v
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return st
}

func (s homeState) equal(o homeState) bool { return s.diff(o) == "" }

// diff lists the paths that differ.
func (s homeState) diff(o homeState) string {
	var out []string
	for p, v := range s {
		if w, ok := o[p]; !ok {
			out = append(out, "+"+p)
		} else if w != v {
			out = append(out, "~"+p)
		}
	}
	for p := range o {
		if _, ok := s[p]; !ok {
			out = append(out, "-"+p)
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// assertClean checks that the home holds exactly what its lock says:
// every tree intact, no tree the lock does not name, no leftover of a
// writer (temporary files, journal, .tmp), data directories 0700.
func assertClean(t testing.TB, h *Home) {
	t.Helper()
	l, err := h.ReadLock()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, e := range l.Plugins {
		in := h.installed(e)
		if err := h.Verify(&in); err != nil {
			t.Errorf("%s: %v", e.Name, err)
		}
		hexd := strings.TrimPrefix(e.ArchiveDigest, "sha256:")
		want[hexd], want[hexd+".files"] = true, true
	}
	entries, _ := os.ReadDir(filepath.Join(h.Dir(), storeDir))
	for _, e := range entries {
		if !want[e.Name()] {
			t.Errorf("store holds %s, which the lock does not name", e.Name())
		}
	}
	for _, name := range []string{journalFile, tmpDir} {
		if _, err := os.Lstat(h.path(name)); err == nil {
			t.Errorf("leftover %s", name)
		}
	}
	for _, d := range []string{h.Dir(), filepath.Join(h.Dir(), dataDir)} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp-") {
				t.Errorf("leftover %s", filepath.Join(d, e.Name()))
			}
			if d != h.Dir() && e.IsDir() {
				if fi, _ := e.Info(); fi.Mode().Perm() != 0o700 {
					t.Errorf("data dir %s has mode %v", e.Name(), fi.Mode())
				}
			}
		}
	}
}

// snapshot is the plugin as the directory reader sees it.
func (p plugin) snapshot(t testing.TB) *snapshot.Snapshot {
	t.Helper()
	s, err := snapshot.ReadDir(p.writeDir(t, filepath.Join(t.TempDir(), p.name)), snapshot.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
