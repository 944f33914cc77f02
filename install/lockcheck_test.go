package install

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/source"
	"github.com/plugkit/plugkit/trust"
)

// kvWider is kv with a second stdio server, the one a tampered lock would
// smuggle in.
func kvWider() plugin {
	p := kvV1()
	p.version = "1.1.0"
	p.mcp = mcpJSON(map[string]string{
		"db":    `{"type": "stdio", "command": "./bin/db", "args": ["--data", "${PLUGIN_DATA}/db"], "env": {"MODE": "fast"}}`,
		"extra": `{"type": "stdio", "command": "./bin/extra"}`,
	})
	p.files = map[string]string{"bin/db": "#!/bin/sh\necho db\n", "bin/extra": "#!/bin/sh\necho extra\n", "README.md": "kv"}
	return p
}

// rewriteLock applies edit to the home's lock, as a pull request could.
func rewriteLock(t *testing.T, h *Home, edit func(l *Lock)) {
	t.Helper()
	l, err := h.ReadLock()
	if err != nil {
		t.Fatal(err)
	}
	edit(l)
	writeFile(t, h.LockPath(), string(l.Encode()))
}

// copyTree copies the stored tree of digest from one home's store to
// another's, modes kept, as if it had been installed there.
func copyTree(t *testing.T, from, to *Home, digest string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to.TreePath(digest)), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{from.TreePath(digest), from.filesPath(digest)} {
		if out, err := exec.Command("cp", "-a", p, filepath.Dir(to.TreePath(digest))).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
	}
}

// TestLockMismatchSurface: a lock entry pointed at a version that runs
// one more server, its servers left as they were, is refused by every
// reader: sync stores none of the fetched bytes, and with the tree in the
// store check, Verify, Load and update all name the plugin and the server.
func TestLockMismatchSurface(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	h := openHome(t, filepath.Join(dir, "home"))
	mustInstall(t, h, pathSource(kvV1().writeDir(t, filepath.Join(dir, "kv1"))))
	// The wider version, installed in a scratch home for its digests.
	scratch := openHome(t, filepath.Join(dir, "scratch"))
	widerDir := kvWider().writeDir(t, filepath.Join(dir, "kv2"))
	wide := mustInstall(t, scratch, pathSource(widerDir)).Changes[0].New
	rewriteLock(t, h, func(l *Lock) {
		e := l.Find("kv")
		e.Source.Path, e.Identity, e.ArchiveDigest, e.Version = widerDir, wide.Identity, wide.ArchiveDigest, wide.Version
	})

	res, err := h.Sync(ctx, SyncOptions{})
	if !errors.Is(err, ErrLockMismatch) || !strings.Contains(err.Error(), "server extra added") {
		t.Fatalf("sync of the tampered lock: %v", err)
	}
	if c := res.Changes[0]; c.Action != ActionFailed || !errors.Is(c.Err, ErrLockMismatch) {
		t.Fatalf("sync change: %+v", c)
	}
	if _, err := os.Lstat(h.TreePath(wide.ArchiveDigest)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("sync stored the tree the lock does not describe: %v", err)
	}

	// The tree in the store, as a home that installed it would have it.
	copyTree(t, scratch, h, wide.ArchiveDigest)
	in, err := h.Get("kv")
	if err != nil {
		t.Fatal(err)
	}
	var mm *MismatchError
	if err := h.Verify(in); !errors.As(err, &mm) || mm.Name != "kv" || mm.Field != "servers" || !strings.Contains(mm.Tree, "server extra added") {
		t.Fatalf("Verify: %v", err)
	}
	if _, err := h.Load(in, agentplugin.Options{}); !errors.Is(err, ErrLockMismatch) {
		t.Fatalf("Load: %v", err)
	}
	reps, err := h.Check(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := reps[0].Problems; len(p) != 1 || p[0].Kind != "lock-mismatch" || !strings.Contains(p[0].Detail, "server extra added") {
		t.Fatalf("check: %+v", reps)
	}
	var n int
	res, err = h.Update(ctx, nil, UpdateOptions{Consent: yes(&n)})
	if !errors.Is(err, ErrLockMismatch) || res.Changes[0].Action != ActionFailed || n != 0 {
		t.Fatalf("update: %v %+v, %d consents", err, res, n)
	}

	// Each field of the surface counts, not only added servers.
	rewriteLock(t, h, func(l *Lock) {
		e := l.Find("kv")
		e.Servers = Surface(loadDir(t, widerDir))
		e.Servers[0].Args = []string{"--data", "/elsewhere"}
	})
	in, _ = h.Get("kv")
	if err := h.Verify(in); !errors.Is(err, ErrLockMismatch) || !strings.Contains(err.Error(), "server db: args") {
		t.Fatalf("Verify of changed args: %v", err)
	}
	// A reinstall records what the tree runs, with consent, and all is well.
	mustInstall(t, h, pathSource(widerDir))
	if reps, _ := h.Check(ctx, nil); len(reps[0].Problems) != 0 {
		t.Fatalf("after reinstalling: %+v", reps)
	}
}

func loadDir(t *testing.T, dir string) *agentplugin.Package {
	t.Helper()
	pkg, err := agentplugin.LoadDir(dir, agentplugin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

// TestLockEntryBoundToName: swapping the identities of two entries makes
// both lock mismatches (the tree holds the other plugin), so neither runs
// with the other's PLUGIN_DATA.
func TestLockEntryBoundToName(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	h := openHome(t, filepath.Join(dir, "home"))
	mustInstall(t, h,
		pathSource(plugin{name: "alpha", version: "1"}.writeDir(t, filepath.Join(dir, "alpha"))),
		pathSource(plugin{name: "beta", version: "1"}.writeDir(t, filepath.Join(dir, "beta"))))
	rewriteLock(t, h, func(l *Lock) {
		a, b := l.Find("alpha"), l.Find("beta")
		a.Identity, b.Identity = b.Identity, a.Identity
		a.ArchiveDigest, b.ArchiveDigest = b.ArchiveDigest, a.ArchiveDigest
	})
	reps, err := h.Check(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reps {
		if len(r.Problems) != 1 || r.Problems[0].Kind != "lock-mismatch" || !strings.Contains(r.Problems[0].Detail, "name") {
			t.Errorf("check %s: %+v", r.Name, r.Problems)
		}
	}
	in, _ := h.Get("alpha")
	var mm *MismatchError
	if _, err := h.Load(in, agentplugin.Options{}); !errors.As(err, &mm) || mm.Field != "name" || mm.Tree != "beta" {
		t.Fatalf("Load alpha: %v", err)
	}
	if _, err := h.Sync(ctx, SyncOptions{}); !errors.Is(err, ErrLockMismatch) {
		t.Fatalf("sync: %v", err)
	}
	if _, err := os.Lstat(h.DataDir("alpha")); err == nil {
		t.Log("alpha's data directory exists from its install, as it should")
	}
}

// TestLockSkillsDiffer: a skill list other than the tree's is a warning,
// never a refusal, and the next sync records the tree's list.
func TestLockSkillsDiffer(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	h := openHome(t, filepath.Join(dir, "home"))
	mustInstall(t, h, pathSource(kvV1().writeDir(t, filepath.Join(dir, "kv"))))
	rewriteLock(t, h, func(l *Lock) { l.Find("kv").Skills = []string{"gone", "hello"} })
	in, _ := h.Get("kv")
	pkg, err := h.Load(in, agentplugin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := pkg.Diagnostics[len(pkg.Diagnostics)-1]; d.Code != CodeSkillsDiffer || d.Severity != agentplugin.Warning {
		t.Fatalf("diagnostics: %v", pkg.Diagnostics)
	}
	reps, _ := h.Check(ctx, nil)
	if len(reps[0].Problems) != 0 || len(reps[0].Warnings) != 1 || reps[0].Warnings[0].Code != CodeSkillsDiffer {
		t.Fatalf("check: %+v", reps[0])
	}
	if _, err := h.Sync(ctx, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if in, _ := h.Get("kv"); !slices.Equal(in.Skills, []string{"hello"}) {
		t.Fatalf("after sync the lock lists %v", in.Skills)
	}
	// Update records it too.
	rewriteLock(t, h, func(l *Lock) { l.Find("kv").Skills = []string{} })
	var n int
	if _, err := h.Update(ctx, nil, UpdateOptions{Consent: yes(&n)}); err != nil {
		t.Fatal(err)
	}
	if in, _ := h.Get("kv"); !slices.Equal(in.Skills, []string{"hello"}) || n != 0 {
		t.Fatalf("after update the lock lists %v (%d consents)", in.Skills, n)
	}
}

// TestPolicyNeverFailsOpen: with the policy.json the lock records deleted
// or edited, install, update and sync refuse, while list and remove work;
// SetPolicy and RemovePolicy change it, with consent; a lock whose policy
// was deleted is reported.
func TestPolicyNeverFailsOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	allowed := kvV1().writeDir(t, filepath.Join(dir, "allowed", "kv"))
	outside := plugin{name: "notes", version: "1"}.writeDir(t, filepath.Join(dir, "elsewhere", "notes"))
	pol := loadPolicy(t, dir, `{"rules": [{"name": "*", "method": "local-directory", "directories": ["allowed"]}]}`)
	h := openHome(t, filepath.Join(dir, "home"))
	var n int
	if _, err := h.Install(ctx, []source.Source{pathSource(allowed)}, InstallOptions{Consent: yes(&n), Policy: pol}); err != nil {
		t.Fatal(err)
	}
	policyBytes := readFile(t, h.path(PolicyFile))

	for name, damage := range map[string]struct {
		do   func()
		want error
	}{
		"deleted": {func() { os.Remove(h.path(PolicyFile)) }, ErrPolicyMissing},
		"edited": {func() {
			writeFile(t, h.path(PolicyFile), `{"rules": [{"name": "*", "method": "local-directory", "directories": ["/"]}]}`)
		}, ErrPolicyMismatch},
	} {
		damage.do()
		before := snapshotHome(t, h.Dir())
		if _, err := h.Install(ctx, []source.Source{pathSource(outside)}, InstallOptions{Consent: yes(&n)}); !errors.Is(err, damage.want) {
			t.Errorf("%s: install: %v", name, err)
		}
		if _, err := h.Update(ctx, nil, UpdateOptions{Consent: yes(&n)}); !errors.Is(err, damage.want) {
			t.Errorf("%s: update: %v", name, err)
		}
		if _, err := h.Sync(ctx, SyncOptions{}); !errors.Is(err, damage.want) {
			t.Errorf("%s: sync: %v", name, err)
		}
		if _, err := h.CheckPolicy(); !errors.Is(err, damage.want) {
			t.Errorf("%s: CheckPolicy: %v", name, err)
		}
		if after := snapshotHome(t, h.Dir()); !after.equal(before) {
			t.Errorf("%s: a refusal changed the home: %s", name, after.diff(before))
		}
		if list, err := h.List(); err != nil || len(list) != 1 {
			t.Errorf("%s: list: %v %v", name, list, err)
		}
		writeFile(t, h.path(PolicyFile), policyBytes)
	}

	// Remove works without the policy.
	os.Remove(h.path(PolicyFile))
	if _, err := h.Remove(ctx, []string{"kv"}, RemoveOptions{}); err != nil {
		t.Fatalf("remove without the policy: %v", err)
	}
	// The lock still records the policy: removing every plugin does not
	// dodge it.
	if _, err := h.Install(ctx, []source.Source{pathSource(outside)}, InstallOptions{Consent: yes(&n)}); !errors.Is(err, ErrPolicyMissing) {
		t.Fatalf("install into the emptied home: %v", err)
	}
	writeFile(t, h.path(PolicyFile), policyBytes)
	if _, err := h.Install(ctx, []source.Source{pathSource(allowed)}, InstallOptions{Consent: yes(&n)}); err != nil {
		t.Fatal(err)
	}

	// SetPolicy: refused without consent, refused when it does not admit
	// what is installed, then accepted.
	narrower := loadPolicy(t, dir, `{"rules": [{"name": "notes", "method": "local-directory", "directories": ["elsewhere"]}]}`)
	before := snapshotHome(t, h.Dir())
	if _, err := h.SetPolicy(ctx, narrower, allowPolicy(true)); !errors.Is(err, trust.ErrRefused) {
		t.Fatalf("a policy refusing kv: %v", err)
	}
	wider := loadPolicy(t, dir, `{"rules": [{"name": "*", "method": "local-directory", "directories": ["allowed", "elsewhere"]}]}`)
	c, err := h.SetPolicy(ctx, wider, nil)
	if !errors.Is(err, ErrConsent) || !c.Changed || c.New == c.Old || c.Plugins[0].New == nil {
		t.Fatalf("set without consent: %v %+v", err, c)
	}
	if after := snapshotHome(t, h.Dir()); !after.equal(before) {
		t.Fatalf("a refused policy change changed the home: %s", after.diff(before))
	}
	if _, err := h.SetPolicy(ctx, wider, allowPolicy(true)); err != nil {
		t.Fatal(err)
	}
	if l, _ := h.ReadLock(); l.Policy != c.New {
		t.Fatalf("lock policy %s, want %s", l.Policy, c.New)
	}
	if _, err := h.Install(ctx, []source.Source{pathSource(outside)}, InstallOptions{Consent: yes(&n)}); err != nil {
		t.Fatalf("install under the wider policy: %v", err)
	}

	// The lock's policy deleted in review: the home's policy still
	// applies, and CheckPolicy and Sync say so.
	rewriteLock(t, h, func(l *Lock) { l.Policy = "" })
	if w, err := h.CheckPolicy(); err != nil || !strings.Contains(w, "the lock records no trust policy") {
		t.Fatalf("CheckPolicy: %q %v", w, err)
	}
	res, err := h.Sync(ctx, SyncOptions{})
	if err != nil || len(res.Warnings) != 1 {
		t.Fatalf("sync: %v %+v", err, res)
	}

	// RemovePolicy removes file, digest and decisions together.
	if _, err := h.RemovePolicy(ctx, allowPolicy(true)); err != nil {
		t.Fatal(err)
	}
	l, _ := h.ReadLock()
	if _, err := os.Lstat(h.path(PolicyFile)); !errors.Is(err, os.ErrNotExist) || l.Policy != "" || l.Find("kv").Trust != nil {
		t.Fatalf("after remove: %v\n%s", err, readFile(t, h.LockPath()))
	}
	if w, err := h.CheckPolicy(); err != nil || w != "" {
		t.Fatalf("CheckPolicy after remove: %q %v", w, err)
	}
	assertClean(t, h)
}

func allowPolicy(ok bool) PolicyConsentFunc {
	return func(context.Context, *PolicyChange) (bool, error) { return ok, nil }
}

// TestHomeDirectoriesNotLinks: a home whose data directory (or store) is
// a link is refused before anything is written through it.
func TestHomeDirectoriesNotLinks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := kvV1().writeDir(t, filepath.Join(dir, "kv"))
	for _, sub := range []string{dataDir, "store", storeDir} {
		h := openHome(t, filepath.Join(dir, "home-"+strings.ReplaceAll(sub, "/", "-")))
		outside := filepath.Join(dir, "outside-"+strings.ReplaceAll(sub, "/", "-"))
		if err := os.MkdirAll(outside, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(h.path(sub)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, h.path(sub)); err != nil {
			t.Fatal(err)
		}
		var n int
		_, err := h.Install(ctx, []source.Source{pathSource(src)}, InstallOptions{Consent: yes(&n)})
		if err == nil || !strings.Contains(err.Error(), "not a directory") {
			t.Errorf("%s as a link: %v", sub, err)
		}
		if entries, _ := os.ReadDir(outside); len(entries) != 0 {
			t.Errorf("%s as a link: install wrote %v outside the home", sub, entries)
		}
	}
}

// TestUpdateReportsEachPlugin: one source gone does not stop the others'
// update, dry or not; the failure is that plugin's own.
func TestUpdateReportsEachPlugin(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	h := openHome(t, filepath.Join(dir, "home"))
	alpha := plugin{name: "alpha", version: "1"}
	beta := plugin{name: "beta", version: "1"}
	mustInstall(t, h, pathSource(alpha.writeDir(t, filepath.Join(dir, "alpha"))), pathSource(beta.writeDir(t, filepath.Join(dir, "beta"))))
	alpha.version = "2"
	alpha.writeDir(t, filepath.Join(dir, "alpha"))
	os.RemoveAll(filepath.Join(dir, "beta"))
	for _, dry := range []bool{true, false} {
		var n int
		res, err := h.Update(ctx, nil, UpdateOptions{Consent: yes(&n), DryRun: dry})
		if err == nil || !strings.Contains(err.Error(), "1 of 2 plugins failed to update") {
			t.Fatalf("dry %v: %v", dry, err)
		}
		if a, b := res.Changes[0], res.Changes[1]; a.Action != ActionUpdate || b.Action != ActionFailed || b.Err == nil || !strings.Contains(b.Err.Error(), "beta") {
			t.Fatalf("dry %v: %+v %+v", dry, a, b)
		}
	}
	if in, _ := h.Get("alpha"); in.Version != "2" {
		t.Fatalf("alpha not updated: %+v", in.Entry)
	}
	if in, _ := h.Get("beta"); in.Version != "1" {
		t.Fatalf("beta changed: %+v", in.Entry)
	}
}

// TestUpgradeHomeOfLockVersion1: a lock written by the last plugkit of
// lock version 1 (testdata/home-v1) syncs, lists, checks and verifies;
// the first write makes it version 2 with the same entries.
func TestUpgradeHomeOfLockVersion1(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "kv")
	if out, err := exec.Command("cp", "-a", filepath.Join("testdata", "home-v1", "kv"), src).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	h := openHome(t, filepath.Join(dir, "home"))
	old := strings.ReplaceAll(readFile(t, filepath.Join("testdata", "home-v1", "plugkit.lock")), "@SRC@", src)
	writeFile(t, h.LockPath(), old)
	if l, err := h.ReadLock(); err != nil || l.Version != 1 {
		t.Fatalf("reading version 1: %v", err)
	}
	res, err := h.Sync(ctx, SyncOptions{})
	if err != nil || res.Changes[0].Action != ActionRestore {
		t.Fatalf("sync: %v %+v", err, res)
	}
	reps, err := h.Check(ctx, nil)
	if err != nil || len(reps[0].Problems)+len(reps[0].Warnings) != 0 {
		t.Fatalf("check: %v %+v", err, reps)
	}
	in, _ := h.Get("kv")
	if err := h.Verify(in); err != nil {
		t.Fatal(err)
	}
	now := readFile(t, h.LockPath())
	if want := strings.Replace(old, `"lockfileVersion": 1`, `"lockfileVersion": 2`, 1); now != want {
		t.Fatalf("after the first write the lock is\n%s\nwant\n%s", now, want)
	}
	assertClean(t, h)
}
