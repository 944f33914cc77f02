package install

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/source"
)

// kvV1 is the plugin most tests install: a skill and one stdio server
// with a ./ command.
func kvV1() plugin {
	return plugin{name: "kv", version: "1.0.0",
		skills: map[string]string{"hello": "Hi."},
		mcp:    mcpJSON(map[string]string{"db": `{"type": "stdio", "command": "./bin/db", "args": ["--data", "${PLUGIN_DATA}/db"], "env": {"MODE": "fast"}}`}),
		files:  map[string]string{"bin/db": "#!/bin/sh\necho db\n", "README.md": "kv"}}
}

// TestLifecycle is a plugin's whole life: install, list, an update
// with only skill changes (no consent), an update adding a server
// command (consent; data kept), remove, reinstall finding its data,
// purge.
func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "kv")
	kvV1().writeDir(t, src)
	h := openHome(t, filepath.Join(dir, "home"))

	res := mustInstall(t, h, pathSource(src))
	c := res.Changes[0]
	if c.Action != ActionInstall || !c.NeedsConsent || len(c.Surface) != 1 || c.Surface[0].Kind != "added" {
		t.Fatalf("install change: %+v", c)
	}
	list, err := h.List()
	if err != nil || len(list) != 1 {
		t.Fatal(list, err)
	}
	kv := list[0]
	if kv.Name != "kv" || kv.Version != "1.0.0" || kv.Identity != kv.ArchiveDigest || kv.Source.Kind != KindDirectory ||
		kv.Source.Path != src || kv.DataDir != filepath.Join(h.Dir(), "data", "kv") || len(kv.Skills) != 1 {
		t.Fatalf("listed: %+v", kv)
	}
	if fi, err := os.Stat(kv.DataDir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("data dir: %v %v", fi, err)
	}
	writeFile(t, filepath.Join(kv.DataDir, "state.db"), "precious")

	// Only a skill changes: no consent is asked.
	v2 := kvV1()
	v2.version = "1.1.0"
	v2.skills = map[string]string{"hello": "Hello again.", "bye": "Bye."}
	v2.writeDir(t, src)
	res, err = h.Update(ctx, nil, UpdateOptions{})
	if err != nil {
		t.Fatalf("skill-only update needed consent: %v", err)
	}
	if c := res.Changes[0]; c.Action != ActionUpdate || c.NeedsConsent || len(c.Surface) != 0 || len(c.CodeFiles) != 0 {
		t.Fatalf("skill-only update: %+v", c)
	}
	if in, _ := h.Get("kv"); in.Version != "1.1.0" || len(in.Skills) != 2 {
		t.Fatalf("after update: %+v", in)
	}

	// A new server command: consent needed; without it nothing changes.
	v3 := v2
	v3.version = "2.0.0"
	v3.mcp = mcpJSON(map[string]string{
		"db":   `{"type": "stdio", "command": "./bin/db", "args": ["--data", "${PLUGIN_DATA}/db"], "env": {"MODE": "fast"}}`,
		"sync": `{"type": "stdio", "command": "./bin/sync"}`})
	v3.files = map[string]string{"bin/db": "#!/bin/sh\necho db\n", "bin/sync": "#!/bin/sh\necho sync\n", "README.md": "kv"}
	v3.writeDir(t, src)
	before := snapshotHome(t, h.Dir())
	res, err = h.Update(ctx, []string{"kv"}, UpdateOptions{})
	if !errors.Is(err, ErrConsent) {
		t.Fatalf("update adding a server: %v, want ErrConsent", err)
	}
	if c := res.Changes[0]; !c.NeedsConsent || len(c.Surface) != 1 || c.Surface[0].Server != "sync" || c.Surface[0].Kind != "added" ||
		strings.Join(c.CodeFiles, ",") != "bin/sync" {
		t.Fatalf("refused change: %+v", c)
	}
	if after := snapshotHome(t, h.Dir()); !after.equal(before) {
		t.Fatalf("a refused update changed the home: %s", after.diff(before))
	}
	// A dry run says the same and writes nothing.
	res, err = h.Update(ctx, nil, UpdateOptions{DryRun: true})
	if err != nil || !res.Changes[0].NeedsConsent {
		t.Fatalf("dry run: %+v %v", res, err)
	}
	if after := snapshotHome(t, h.Dir()); !after.equal(before) {
		t.Fatalf("a dry run changed the home: %s", after.diff(before))
	}
	var asked int
	if _, err = h.Update(ctx, []string{"kv"}, UpdateOptions{Consent: yes(&asked)}); err != nil || asked != 1 {
		t.Fatalf("update with consent: %v (asked %d)", err, asked)
	}
	in, _ := h.Get("kv")
	if in.Version != "2.0.0" || len(in.Servers) != 2 {
		t.Fatalf("after consent: %+v", in)
	}
	if got := readFile(t, filepath.Join(in.DataDir, "state.db")); got != "precious" {
		t.Fatalf("data not kept across the update: %q", got)
	}
	assertClean(t, h)

	// Remove keeps the data; reinstalling from the same source finds it.
	if _, err := h.Remove(ctx, []string{"kv"}, RemoveOptions{}); err != nil {
		t.Fatal(err)
	}
	if l, _ := h.List(); len(l) != 0 {
		t.Fatalf("still listed: %+v", l)
	}
	if _, err := os.Stat(in.Path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("tree of a removed plugin: %v", err)
	}
	if got := readFile(t, filepath.Join(in.DataDir, "state.db")); got != "precious" {
		t.Fatalf("remove without purge lost data: %q", got)
	}
	mustInstall(t, h, pathSource(src))
	if got := readFile(t, filepath.Join(in.DataDir, "state.db")); got != "precious" {
		t.Fatalf("reinstall did not find its data: %q", got)
	}
	if _, err := h.Remove(ctx, []string{"kv"}, RemoveOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(in.DataDir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("purge kept the data: %v", err)
	}
	assertClean(t, h)
}

// TestSpec9_1_PluginDataPreservedAcrossUpdates: section 9.1, PLUGIN_DATA
// is created by the client, writable, and "MUST preserve its contents
// across plugin updates", whatever the update changes.
func TestSpec9_1_PluginDataPreservedAcrossUpdates(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "kv")
	kvV1().writeDir(t, src)
	h := openHome(t, filepath.Join(dir, "home"))
	mustInstall(t, h, pathSource(src))
	in, _ := h.Get("kv")
	writeFile(t, filepath.Join(in.DataDir, "deps", "lib.js"), "x")
	for i, version := range []string{"1.0.1", "1.0.2", "3.0.0"} {
		p := kvV1()
		p.version = version
		if i == 2 {
			p.mcp = mcpJSON(map[string]string{"db": `{"type": "stdio", "command": "node", "args": ["server.js"]}`})
		}
		p.writeDir(t, src)
		var n int
		if _, err := h.Update(context.Background(), nil, UpdateOptions{Consent: yes(&n)}); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, filepath.Join(in.DataDir, "deps", "lib.js")); got != "x" {
			t.Fatalf("update to %s lost PLUGIN_DATA", version)
		}
	}
}

// TestSpec5_2_RejectedPluginNotInstalled: a plugin the specification
// rejects (section 5.2/5.3) is refused, and so is one with error
// diagnostics; nothing is written, not even the home.
func TestSpec5_2_RejectedPluginNotInstalled(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	h := openHome(t, home)
	rejected := filepath.Join(dir, "rejected")
	writeFile(t, filepath.Join(rejected, "plugin.json"), `{"name": "kv"}`)
	var n int
	_, err := h.Install(context.Background(), []source.Source{pathSource(rejected)}, InstallOptions{Consent: yes(&n)})
	if _, ok := agentplugin.Diagnostics(err); !ok {
		t.Fatalf("rejected plugin: %v", err)
	}
	invalid := kvV1()
	invalid.skills = map[string]string{"hello": "x"}
	invalid.files = map[string]string{"skills/bad/SKILL.md": "---\nname: other\ndescription: x\n---\n"}
	invalidDir := invalid.writeDir(t, filepath.Join(dir, "invalid"))
	_, err = h.Install(context.Background(), []source.Source{pathSource(invalidDir)}, InstallOptions{Consent: yes(&n)})
	var ie *InvalidError
	if !errors.As(err, &ie) || !errors.Is(err, ErrInvalidPlugin) || !agentplugin.HasErrors(ie.Diagnostics) {
		t.Fatalf("plugin with an invalid skill: %v", err)
	}
	if n != 0 {
		t.Errorf("consent asked %d times for refused plugins", n)
	}
	if _, err := os.Stat(home); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused install created the home: %v", err)
	}
}

func TestInstallRefusals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a := kvV1().writeDir(t, filepath.Join(dir, "a", "kv"))
	b := kvV1().writeDir(t, filepath.Join(dir, "b", "kv"))
	h := openHome(t, filepath.Join(dir, "home"))

	// No consent function: nothing installed.
	_, err := h.Install(ctx, []source.Source{pathSource(a)}, InstallOptions{})
	if !errors.Is(err, ErrConsent) {
		t.Fatalf("no consent: %v", err)
	}
	// A refusal among several: none is installed.
	other := plugin{name: "notes", version: "1"}.writeDir(t, filepath.Join(dir, "notes"))
	no := func(_ context.Context, c *Change) (bool, error) { return c.Name != "notes", nil }
	_, err = h.Install(ctx, []source.Source{pathSource(a), pathSource(other)}, InstallOptions{Consent: no})
	if !errors.Is(err, ErrConsent) {
		t.Fatalf("refused consent: %v", err)
	}
	if l, _ := h.List(); len(l) != 0 {
		t.Fatalf("a refused install installed %+v", l)
	}
	// Two sources of one name in one call.
	var n int
	_, err = h.Install(ctx, []source.Source{pathSource(a), pathSource(b)}, InstallOptions{Consent: yes(&n)})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("two sources of kv: %v", err)
	}

	mustInstall(t, h, pathSource(a))
	in, _ := h.Get("kv")
	writeFile(t, filepath.Join(in.DataDir, "mine"), "from a")
	// Another origin without --replace.
	_, err = h.Install(ctx, []source.Source{pathSource(b)}, InstallOptions{Consent: yes(&n)})
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "--replace") {
		t.Fatalf("other origin: %v", err)
	}
	// With --keep-data the data stays...
	res, err := h.Install(ctx, []source.Source{pathSource(b)}, InstallOptions{Consent: yes(&n), Replace: true, KeepData: true})
	if err != nil || res.Changes[0].Action != ActionReplace || res.Changes[0].DataReset || res.Changes[0].DataFrom == nil {
		t.Fatalf("replace keeping data: %+v %v", res, err)
	}
	if readFile(t, filepath.Join(in.DataDir, "mine")) != "from a" {
		t.Fatal("--keep-data lost the data")
	}
	// ...and now b owns it: back to a without --keep-data empties it.
	res, err = h.Install(ctx, []source.Source{pathSource(a)}, InstallOptions{Consent: yes(&n), Replace: true})
	if err != nil || !res.Changes[0].DataReset || res.Changes[0].DataFrom.Path != b {
		t.Fatalf("replace: %+v %v", res.Changes[0], err)
	}
	if entries, err := os.ReadDir(in.DataDir); err != nil || len(entries) != 0 {
		t.Fatalf("data after a replace from another source: %v %v", entries, err)
	}
	if fi, _ := os.Stat(in.DataDir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("new data dir mode %v", fi.Mode())
	}
	// Installing the same identity again changes nothing, byte for byte.
	before := readFile(t, h.LockPath())
	res = mustInstall(t, h, pathSource(a))
	if res.Changes[0].Action != ActionNone || readFile(t, h.LockPath()) != before {
		t.Fatalf("reinstall of the same identity: %+v", res.Changes[0])
	}
	// Names that are not installed.
	if _, err := h.Update(ctx, []string{"nope"}, UpdateOptions{}); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("update nope: %v", err)
	}
	if _, err := h.Remove(ctx, []string{"nope"}, RemoveOptions{}); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("remove nope: %v", err)
	}
	assertClean(t, h)
}

// TestInstallArchive: an archive's identity is the sha256 of its bytes;
// its archive digest is what plugkit pack gives for the tree, which
// differs when the archive was compressed otherwise. The tree and its
// .files list are read-only.
func TestInstallArchive(t *testing.T) {
	dir := t.TempDir()
	packed := kvV1().pack(t)
	recompressed := regzip(t, packed)
	path := filepath.Join(dir, "kv-1.0.0.tgz")
	if err := os.WriteFile(path, recompressed, 0o644); err != nil {
		t.Fatal(err)
	}
	h := openHome(t, filepath.Join(dir, "home"))
	mustInstall(t, h, pathSource(path))
	in, err := h.Get("kv")
	if err != nil {
		t.Fatal(err)
	}
	if in.Source.Kind != KindArchive || in.Identity != archive.Digest(recompressed) || in.ArchiveDigest != archive.Digest(packed) {
		t.Fatalf("archive entry: %+v (pack digest %s)", in.Entry, archive.Digest(packed))
	}
	// The stored tree is the archive's, read-only, executables 0555.
	fi, err := os.Stat(filepath.Join(in.Path, "bin", "db"))
	if err != nil || fi.Mode().Perm() != 0o555 {
		t.Fatalf("bin/db: %v %v", fi, err)
	}
	if fi, _ := os.Stat(filepath.Join(in.Path, "plugin.json")); fi.Mode().Perm() != 0o444 {
		t.Fatalf("plugin.json mode %v", fi.Mode())
	}
	if fi, _ := os.Stat(in.Path); fi.Mode().Perm() != 0o555 {
		t.Fatalf("tree mode %v", fi.Mode())
	}
	if fi, err := os.Stat(in.Path + ".files"); err != nil || fi.Mode().Perm() != 0o444 {
		t.Fatalf("file list: %v %v", fi, err)
	}
	if err := h.Verify(in); err != nil {
		t.Fatal(err)
	}
}

// TestSpec4_1_NothingOutsideTheHome: links in a plugin that resolve
// outside its root are not installed (section 4.1: denied), links inside
// are stored as plain files, and nothing outside the home is written —
// not even through a data directory replaced by a link.
func TestSpec4_1_NothingOutsideTheHome(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	writeFile(t, filepath.Join(outside, "secret"), "do not copy")
	p := kvV1()
	src := p.writeDir(t, filepath.Join(dir, "kv"))
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(src, "leak")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("README.md", filepath.Join(src, "readme-link")); err != nil {
		t.Fatal(err)
	}
	h := openHome(t, filepath.Join(dir, "home"))
	mustInstall(t, h, pathSource(src))
	in, _ := h.Get("kv")
	if _, err := os.Lstat(filepath.Join(in.Path, "leak")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a link escaping the root was installed: %v", err)
	}
	fi, err := os.Lstat(filepath.Join(in.Path, "readme-link"))
	if err != nil || !fi.Mode().IsRegular() || readFile(t, filepath.Join(in.Path, "readme-link")) != "kv" {
		t.Errorf("a link inside the root is not a plain file in the store: %v %v", fi, err)
	}
	if err := h.Verify(in); err != nil {
		t.Fatal(err)
	}

	// A data directory replaced by a link to outside is refused, and the
	// outside stays as it was.
	if _, err := h.Remove(context.Background(), []string{"kv"}, RemoveOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, in.DataDir); err != nil {
		t.Fatal(err)
	}
	var n int
	_, err = h.Install(context.Background(), []source.Source{pathSource(src)}, InstallOptions{Consent: yes(&n)})
	if err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("data dir as a link: %v", err)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 || readFile(t, filepath.Join(outside, "secret")) != "do not copy" {
		t.Fatalf("outside changed: %v", entries)
	}
	if fi, _ := os.Stat(outside); fi.Mode().Perm() == 0o700 {
		t.Fatalf("the link's target was chmodded")
	}
}

// regzip recompresses a .tar.gz at another level: other bytes, same tree.
func regzip(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := recompress(&out, b); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestConsentOnCode: an update that changes only files under the paths of
// ./ commands needs no consent, but lists them; with ConsentOnCode, or
// "consentOnCode" in the home's config.json, it needs consent.
func TestConsentOnCode(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := kvV1().writeDir(t, filepath.Join(dir, "kv"))
	h := openHome(t, filepath.Join(dir, "home"))
	mustInstall(t, h, pathSource(src))
	bump := func(i int) {
		p := kvV1()
		p.files = map[string]string{"bin/db": "#!/bin/sh\necho changed " + string(rune('a'+i)) + "\n", "bin/lib.sh": "x", "README.md": "kv"}
		p.writeDir(t, src)
	}
	bump(0)
	res, err := h.Update(ctx, nil, UpdateOptions{})
	if err != nil || strings.Join(res.Changes[0].CodeFiles, ",") != "bin/db,bin/lib.sh" || res.Changes[0].NeedsConsent {
		t.Fatalf("code-only update: %+v %v", res, err)
	}
	bump(1)
	if _, err := h.Update(ctx, nil, UpdateOptions{ConsentOnCode: true}); !errors.Is(err, ErrConsent) {
		t.Fatalf("with ConsentOnCode: %v", err)
	}
	writeFile(t, filepath.Join(h.Dir(), ConfigFile), `{"consentOnCode": true}`)
	if _, err := h.Update(ctx, nil, UpdateOptions{}); !errors.Is(err, ErrConsent) {
		t.Fatalf("with the home's consentOnCode: %v", err)
	}
	// A README change is not code.
	p := kvV1()
	p.files = map[string]string{"bin/db": "#!/bin/sh\necho changed b\n", "bin/lib.sh": "x", "README.md": "new readme"}
	var n int
	if _, err := h.Update(ctx, nil, UpdateOptions{Consent: yes(&n)}); err != nil {
		t.Fatal(err)
	}
	p.writeDir(t, src)
	if res, err := h.Update(ctx, nil, UpdateOptions{}); err != nil || len(res.Changes[0].CodeFiles) != 0 {
		t.Fatalf("README-only update: %+v %v", res, err)
	}
	writeFile(t, filepath.Join(h.Dir(), ConfigFile), `{"consentOnCod": true}`)
	if _, err := h.Update(ctx, nil, UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "consentOnCod") {
		t.Fatalf("a misspelt setting: %v", err)
	}
}
