package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/source"
)

// TestSyncSecondHome: a second home given the first one's lock gets the
// same store, byte for byte, from a directory, an archive and a real
// registry (fetched there by digest), and data directories for all.
func TestSyncSecondHome(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	reg := startRegistry(t)
	notes := plugin{name: "notes", version: "3.1.0", skills: map[string]string{"jot": "Jot."},
		mcp: mcpJSON(map[string]string{"api": `{"type": "streamable-http", "url": "https://notes.example.com/mcp", "headers": {"X-Tenant": "t"}}`})}
	reg.publish(t, notes, "")
	arc := filepath.Join(dir, "tools-1.0.0.tar.gz")
	if err := os.WriteFile(arc, plugin{name: "tools", version: "1.0.0", files: map[string]string{"bin/x": "#!/bin/sh\n"}}.pack(t), 0o644); err != nil {
		t.Fatal(err)
	}
	kvDir := kvV1().writeDir(t, filepath.Join(dir, "kv"))

	h1 := registryHome(t, filepath.Join(dir, "home1"))
	regSrc, err := source.Parse("notes", source.ParseOptions{Registry: reg.URL})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var installSteps, syncSteps []string
	record := func(steps *[]string) Progress {
		return func(done, total int) { *steps = append(*steps, fmt.Sprintf("%d/%d", done, total)) }
	}
	if _, err := h1.Install(ctx, []source.Source{pathSource(kvDir), pathSource(arc), regSrc}, InstallOptions{Consent: yes(&n), Progress: record(&installSteps)}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(installSteps, " "); got != "1/3 2/3 3/3" {
		t.Errorf("install progress: %s", got)
	}
	if n != 3 {
		t.Errorf("consent asked %d times for 3 new plugins", n)
	}
	in, _ := h1.Get("notes")
	if in.Source.Kind != KindRegistry || in.Source.Channel != "stable" || in.Source.Registry != reg.URL || in.Identity != in.ArchiveDigest {
		t.Fatalf("registry entry: %+v", in.Entry)
	}

	h2 := registryHome(t, filepath.Join(dir, "home2"))
	writeFile(t, h2.LockPath(), readFile(t, h1.LockPath()))
	res, err := h2.Sync(ctx, SyncOptions{Progress: record(&syncSteps)})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(syncSteps, " "); got != "1/3 2/3 3/3" {
		t.Errorf("sync progress: %s", got)
	}
	for _, c := range res.Changes {
		if c.Action != ActionRestore {
			t.Errorf("%s: %s, want restore", c.Name, c.Action)
		}
	}
	s1, s2 := snapshotHome(t, filepath.Join(h1.Dir(), "store")), snapshotHome(t, filepath.Join(h2.Dir(), "store"))
	if !s1.equal(s2) || len(s1) == 0 {
		t.Fatalf("stores differ: %s", s1.diff(s2))
	}
	if readFile(t, h1.LockPath()) != readFile(t, h2.LockPath()) {
		t.Fatal("sync changed the lock")
	}
	assertClean(t, h2)
	for _, name := range []string{"kv", "notes", "tools"} {
		if fi, err := os.Stat(h2.DataDir(name)); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("data dir of %s: %v %v", name, fi, err)
		}
	}
	// Again: nothing to do.
	res, err = h2.Sync(ctx, SyncOptions{})
	if err != nil || res.Changed() {
		t.Fatalf("second sync: %+v %v", res, err)
	}

	// What the lock no longer lists goes.
	l, _ := h2.ReadLock()
	gone := *l.Find("tools")
	l.Delete("tools")
	writeFile(t, h2.LockPath(), string(l.Encode()))
	if _, err := h2.Sync(ctx, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(h2.TreePath(gone.ArchiveDigest)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("tree of an unlisted plugin: %v", err)
	}
	assertClean(t, h2)
}

// TestSyncRefusesChangedSource: a source that now gives other bytes than
// the lock's identity is refused, and the home is left as it was.
func TestSyncRefusesChangedSource(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	kvDir := kvV1().writeDir(t, filepath.Join(dir, "kv"))
	h1 := openHome(t, filepath.Join(dir, "home1"))
	mustInstall(t, h1, pathSource(kvDir))
	writeFile(t, filepath.Join(kvDir, "README.md"), "changed")

	h2 := openHome(t, filepath.Join(dir, "home2"))
	writeFile(t, h2.LockPath(), readFile(t, h1.LockPath()))
	_, err := h2.Sync(ctx, SyncOptions{})
	if !errors.Is(err, ErrSourceChanged) || !strings.Contains(err.Error(), "kv") {
		t.Fatalf("sync of a changed directory: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(h2.Dir(), storeDir))
	if len(entries) != 0 {
		t.Fatalf("a refused sync stored %v", entries)
	}
	// h1 still has its tree: sync there needs nothing from the source.
	if res, err := h1.Sync(ctx, SyncOptions{}); err != nil || res.Changed() {
		t.Fatalf("sync of an intact home: %+v %v", res, err)
	}
}

// TestRegistryUpdate: an update re-resolves the channel; the digest
// fetched is checked; a registry that lost the release fails cleanly.
func TestRegistryUpdate(t *testing.T) {
	ctx := context.Background()
	reg := startRegistry(t)
	v1 := plugin{name: "notes", version: "1.0.0", skills: map[string]string{"jot": "Jot."}}
	d1 := reg.publish(t, v1, "")
	h := registryHome(t, filepath.Join(t.TempDir(), "home"))
	src, _ := source.Parse("notes", source.ParseOptions{Registry: reg.URL})
	var n int
	if _, err := h.Install(ctx, []source.Source{src}, InstallOptions{Consent: yes(&n), Report: true}); err != nil {
		t.Fatal(err)
	}
	// The installation was reported with the reader token.
	c := &distribution.Client{BaseURL: reg.URL, Token: readToken}
	var list distribution.Installations
	if err := c.Request(ctx, "GET", "/installations", nil, &list); err != nil || len(list.Installations) != 1 ||
		list.Installations[0].ReleaseID != "notes@1.0.0" || list.Installations[0].ArtifactDigest != d1 || list.Installations[0].Status != "installed" {
		t.Fatalf("installations: %+v %v", list, err)
	}

	res, err := h.Update(ctx, nil, UpdateOptions{})
	if err != nil || res.Changed() {
		t.Fatalf("update without a new release: %+v %v", res, err)
	}
	v2 := v1
	v2.version = "1.1.0"
	d2 := reg.publish(t, v2, "")
	res, err = h.Update(ctx, nil, UpdateOptions{Report: true})
	if err != nil || res.Changes[0].Action != ActionUpdate || res.Changes[0].New.Identity != d2 || res.Changes[0].Report != "reported" {
		t.Fatalf("update to 1.1.0: %+v %v", res, err)
	}
	if err := c.Request(ctx, "GET", "/installations", nil, &list); err != nil || list.Installations[0].Status != "updated" || list.Installations[0].ArtifactDigest != d2 {
		t.Fatalf("installations after update: %+v %v", list, err)
	}
	// Pinned to a release: update does not move it.
	pinned, _ := source.Parse("notes", source.ParseOptions{Registry: reg.URL, Release: "notes@1.0.0"})
	if _, err := h.Install(ctx, []source.Source{pinned}, InstallOptions{Consent: yes(&n)}); err != nil {
		t.Fatal(err)
	}
	if in, _ := h.Get("notes"); in.Identity != d1 || in.Source.Release != "notes@1.0.0" || in.Source.Channel != "" {
		t.Fatalf("pinned: %+v", in.Entry)
	}
	if res, err := h.Update(ctx, nil, UpdateOptions{}); err != nil || res.Changed() {
		t.Fatalf("update of a pinned release: %+v %v", res, err)
	}
	// Without the reader token the registry refuses, and nothing changes.
	anon := openHome(t, h.Dir())
	before := snapshotHome(t, h.Dir())
	if _, err := anon.Update(ctx, nil, UpdateOptions{}); err == nil {
		t.Fatal("anonymous update of a private registry succeeded")
	}
	if after := snapshotHome(t, h.Dir()); !after.equal(before) {
		t.Fatalf("a failed update changed the home: %s", after.diff(before))
	}
	if archive.Digest(v1.pack(t)) != d1 {
		t.Fatal("pack is not deterministic")
	}
}

// TestSyncReportsEachPlugin: on an empty home, a lock of three directory
// plugins, one of whose sources changed, restores the other two and
// commits them, and reports the third as failed with its own cause (not a
// sibling's cancellation), keeping its lock entry.
func TestSyncReportsEachPlugin(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	h1 := openHome(t, filepath.Join(dir, "home1"))
	var dirs []string
	for _, name := range []string{"a", "b", "c"} {
		d := plugin{name: name, version: "1.0.0", skills: map[string]string{"s": "S."}}.writeDir(t, filepath.Join(dir, name))
		mustInstall(t, h1, pathSource(d))
		dirs = append(dirs, d)
	}
	writeFile(t, filepath.Join(dirs[1], "README.md"), "changed")

	h2 := openHome(t, filepath.Join(dir, "home2"))
	lock := readFile(t, h1.LockPath())
	writeFile(t, h2.LockPath(), lock)
	res, err := h2.Sync(ctx, SyncOptions{Parallel: 3})
	if !errors.Is(err, ErrSourceChanged) || errors.Is(err, context.Canceled) {
		t.Fatalf("sync: %v", err)
	}
	if res == nil || len(res.Changes) != 3 {
		t.Fatalf("result: %+v", res)
	}
	for _, c := range res.Changes {
		want := ActionRestore
		if c.Name == "b" {
			want = ActionFailed
			if !errors.Is(c.Err, ErrSourceChanged) {
				t.Errorf("b: error %v", c.Err)
			}
		} else if c.Err != nil {
			t.Errorf("%s: error %v", c.Name, c.Err)
		}
		if c.Action != want {
			t.Errorf("%s: %s, want %s", c.Name, c.Action, want)
		}
	}
	if readFile(t, h2.LockPath()) != lock {
		t.Fatal("sync changed the lock")
	}
	l, _ := h2.ReadLock()
	for _, name := range []string{"a", "c"} {
		if _, err := os.Stat(h2.TreePath(l.Find(name).ArchiveDigest)); err != nil {
			t.Errorf("tree of %s: %v", name, err)
		}
	}
	if _, err := os.Stat(h2.TreePath(l.Find("b").ArchiveDigest)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("tree of the failed b: %v", err)
	}
}
