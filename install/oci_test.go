package install

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/internal/testservice"
	"github.com/plugkit/plugkit/oci"
	"github.com/plugkit/plugkit/source"
)

// artifact builds the plugin as an OCI artifact of the profile.
func (p plugin) artifact(t testing.TB) *oci.Artifact {
	t.Helper()
	pkg, err := agentplugin.Load(p.snapshot(t), agentplugin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := oci.Build(pkg, oci.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// pushOCI pushes the plugin to a registry repository under tag and
// returns the manifest digest.
func pushOCI(t testing.TB, ref string, p plugin, tag string) string {
	t.Helper()
	r, err := oci.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store, err := oci.Open(ctx, r, oci.RemoteOptions{PlainHTTP: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	a := p.artifact(t)
	if _, err := oci.Push(ctx, store, a, tag); err != nil {
		t.Fatal(err)
	}
	return a.Descriptor.Digest.String()
}

func ociHome(t testing.TB, dir string) *Home {
	t.Helper()
	h, err := Open(dir, Options{Source: source.Options{Remote: oci.RemoteOptions{PlainHTTP: true}}})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestOCISources: install from a real registry (docker-registry) and from
// a layout; the identity is the manifest digest; update re-resolves the
// tag; sync into a second home pulls by digest, even after the tag moved
// on, and the trees are byte for byte the same.
func TestOCISources(t *testing.T) {
	ctx := context.Background()
	reg := testservice.StartRegistry(t)
	ref := "oci://" + reg.Host + "/plugins/kv"
	d1 := pushOCI(t, ref, kvV1(), "1")
	dir := t.TempDir()
	layout := filepath.Join(dir, "layout")
	notes := plugin{name: "notes", version: "1", skills: map[string]string{"jot": "Jot."}}
	lay, err := oci.OpenLayout(ctx, layout, true)
	if err != nil {
		t.Fatal(err)
	}
	a := notes.artifact(t)
	if _, err := oci.Push(ctx, lay, a, "1"); err != nil {
		t.Fatal(err)
	}
	lay.Close()

	h1 := ociHome(t, filepath.Join(dir, "home1"))
	var srcs []source.Source
	for _, arg := range []string{ref + ":1", "oci-layout:" + layout + ":1"} {
		src, err := source.Parse(arg, source.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, src)
	}
	var n int
	if _, err := h1.Install(ctx, srcs, InstallOptions{Consent: yes(&n)}); err != nil {
		t.Fatal(err)
	}
	kv, _ := h1.Get("kv")
	if kv.Identity != d1 || kv.Source.Kind != KindOCI || kv.Source.Reference != ref+":1" || kv.Identity == kv.ArchiveDigest {
		t.Fatalf("oci entry: %+v", kv.Entry)
	}
	nt, _ := h1.Get("notes")
	if nt.Identity != a.Descriptor.Digest.String() || nt.Source.Kind != KindOCILayout || nt.Source.Path != layout || nt.Source.Reference != "1" {
		t.Fatalf("layout entry: %+v", nt.Entry)
	}
	writeFile(t, filepath.Join(kv.DataDir, "state"), "precious")

	// The second home syncs from the lock alone...
	h2 := ociHome(t, filepath.Join(dir, "home2"))
	writeFile(t, h2.LockPath(), readFile(t, h1.LockPath()))
	// ...even once the tag has moved on: it pulls the recorded digest.
	v2 := kvV1()
	v2.version = "2.0.0"
	d2 := pushOCI(t, ref, v2, "1")
	if _, err := h2.Sync(ctx, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if s1, s2 := snapshotHome(t, filepath.Join(h1.Dir(), "store")), snapshotHome(t, filepath.Join(h2.Dir(), "store")); !s1.equal(s2) {
		t.Fatalf("stores differ: %s", s1.diff(s2))
	}
	assertClean(t, h2)

	// Update re-resolves the tag; the data stays.
	res, err := h1.Update(ctx, []string{"kv"}, UpdateOptions{})
	if err != nil || res.Changes[0].Action != ActionUpdate || res.Changes[0].New.Identity != d2 {
		t.Fatalf("update: %+v %v", res, err)
	}
	if readFile(t, filepath.Join(kv.DataDir, "state")) != "precious" {
		t.Fatal("data lost")
	}
	// The same repository under another tag is the same origin.
	if _, err := h1.Install(ctx, []source.Source{mustParse(t, ref+"@"+d1)}, InstallOptions{Consent: yes(&n)}); err != nil {
		t.Fatalf("same repository, pinned by digest: %v", err)
	}
	if in, _ := h1.Get("kv"); in.Identity != d1 || in.Source.Reference != ref+"@"+d1 {
		t.Fatalf("pinned: %+v", in.Entry)
	}
	assertClean(t, h1)
	if _, err := os.Stat(h1.TreePath(kv.ArchiveDigest)); err != nil {
		t.Fatalf("tree of the pinned version: %v", err)
	}
}

func mustParse(t testing.TB, arg string) source.Source {
	t.Helper()
	s, err := source.Parse(arg, source.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPlainHTTPRecorded: a plugin installed from a registry over plain
// HTTP says so in the lock, and update and sync reach it so again without
// being told; a home that did not record it asks for HTTPS and fails.
func TestPlainHTTPRecorded(t *testing.T) {
	ctx := context.Background()
	reg := testservice.StartRegistry(t)
	ref := "oci://" + reg.Host + "/plugins/kv"
	pushOCI(t, ref, kvV1(), "1")
	dir := t.TempDir()
	h := ociHome(t, filepath.Join(dir, "home"))
	mustInstall(t, h, mustParse(t, ref+":1"))
	if !strings.Contains(readFile(t, h.LockPath()), `"plainHTTP": true`) {
		t.Fatalf("the lock does not record plain HTTP:\n%s", readFile(t, h.LockPath()))
	}

	// Later verbs, with no --plain-http.
	plain := openHome(t, h.Dir())
	v2 := kvV1()
	v2.version = "1.0.1"
	d2 := pushOCI(t, ref, v2, "1")
	var n int
	if _, err := plain.Update(ctx, nil, UpdateOptions{Consent: yes(&n)}); err != nil {
		t.Fatalf("update without the flag: %v", err)
	}
	if in, _ := plain.Get("kv"); in.Identity != d2 || !in.Source.PlainHTTP {
		t.Fatalf("after update: %+v", in.Entry)
	}
	h2 := openHome(t, filepath.Join(dir, "home2"))
	writeFile(t, h2.LockPath(), readFile(t, h.LockPath()))
	if _, err := h2.Sync(ctx, SyncOptions{}); err != nil {
		t.Fatalf("sync without the flag: %v", err)
	}

	// The same lock without the record: HTTPS, which the registry does not speak.
	l, _ := h2.ReadLock()
	l.Plugins[0].Source.PlainHTTP = false
	h3 := openHome(t, filepath.Join(dir, "home3"))
	writeFile(t, h3.LockPath(), string(l.Encode()))
	if _, err := h3.Sync(ctx, SyncOptions{}); err == nil || !strings.Contains(err.Error(), "HTTP response to HTTPS client") {
		t.Fatalf("sync over HTTPS: %v", err)
	}
}
