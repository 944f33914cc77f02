package registrycmd

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/distribution"
)

func TestRegistryVerbs(t *testing.T) {
	url := clitest.NewRegistry(t)
	reg := "--registry=" + url
	src := clitest.WritePlugin(t, map[string]string{"plugin.json": clitest.HelloManifest})
	alice := clitest.TokenFile(t, clitest.AliceToken)

	if code, _, _ := runCLI(t, "publish", src); code != 2 {
		t.Fatalf("publish without --registry: exit %d, want 2", code)
	}
	if code, _, _ := runCLI(t, "publish", src, reg, "--channel", "Not Valid"); code != 2 {
		t.Fatalf("bad channel: exit %d, want 2", code)
	}
	code, out, errs := runCLI(t, "publish", src, reg, alice, "--channel", "beta", "--json")
	var res distribution.PublishResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Channel != "beta" || !res.Created {
		t.Fatalf("publish: exit %d %q %s", code, out, errs)
	}
	code, out, _ = runCLI(t, "resolve", "hello", "--channel", "beta", reg, "--json")
	var rel distribution.Release
	if code != 0 || json.Unmarshal([]byte(out), &rel) != nil || rel.ArtifactDigest != res.Release.ArtifactDigest {
		t.Fatalf("resolve: exit %d %q", code, out)
	}
	if code, out, _ := runCLI(t, "resolve", "hello", "--release", "0.1.0", reg); code != 0 || !strings.Contains(out, "release: hello@0.1.0\n") {
		t.Fatalf("resolve --release VERSION: exit %d %q", code, out)
	}
	if code, _, _ := runCLI(t, "resolve", "hello", "--channel", "beta", "--release", "hello@0.1.0", reg); code != 2 {
		t.Fatalf("--channel with --release: exit %d, want 2", code)
	}
	code, out, _ = runCLI(t, "catalog", reg, "--json")
	var cat distribution.Catalog
	if code != 0 || json.Unmarshal([]byte(out), &cat) != nil || cat.Plugins[0].Channels["beta"] != "hello@0.1.0" {
		t.Fatalf("catalog: exit %d %q", code, out)
	}
	if code, out, _ := runCLI(t, "catalog", reg); code != 0 || out != "hello\tbeta=0.1.0\t1 release\t\n" {
		t.Fatalf("catalog: exit %d %q", code, out)
	}
	dst := filepath.Join(t.TempDir(), "out")
	if code, out, errs := runCLI(t, "fetch", "hello", dst, "--channel", "beta", reg); code != 0 {
		t.Fatalf("fetch: exit %d %s %s", code, out, errs)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "plugin.json")); err != nil || !strings.Contains(string(b), `"hello"`) {
		t.Fatalf("fetched plugin.json: %q %v", b, err)
	}
	pinned := filepath.Join(t.TempDir(), "pinned")
	if code, out, _ := runCLI(t, "fetch", res.Release.ArtifactDigest, pinned, reg, "--json"); code != 0 || !strings.Contains(out, `"files": 1`) {
		t.Fatalf("fetch by digest: exit %d %s", code, out)
	}
	if code, _, _ := runCLI(t, "fetch", res.Release.ArtifactDigest, filepath.Join(t.TempDir(), "x"), "--channel", "beta", reg); code != 2 {
		t.Fatalf("fetch of a digest with --channel: exit %d, want 2", code)
	}
	if code, _, _ := runCLI(t, "fetch", "Not A Plugin", filepath.Join(t.TempDir(), "x"), reg); code != 2 {
		t.Fatalf("fetch of a malformed name: exit %d, want 2", code)
	}
	if code, _, _ := runCLI(t, "catalog", "--registry", "http://plugins.example.com"); code != 1 {
		t.Fatalf("plain http off loopback: exit %d, want 1", code)
	}
}

// TestPublishShowsDiagnostics: publish printed
// "published" for a plugin with errors, showing nothing. It now prints the
// diagnostics exactly as validate does and refuses unless --allow-errors.
func TestPublishShowsDiagnostics(t *testing.T) {
	url := clitest.NewRegistry(t)
	reg, alice := "--registry="+url, clitest.TokenFile(t, clitest.AliceToken)
	src := clitest.WritePlugin(t, map[string]string{
		"plugin.json":           clitest.HelloManifest,
		"skills/hello/SKILL.md": "---\nname: other\ndescription: x\n---\nbody\n",
	})
	_, validated, _ := runCLI(t, "validate", src)
	if !strings.Contains(validated, "error[skill-name-mismatch]") {
		t.Fatalf("validate: %q", validated)
	}
	code, out, errs := runCLI(t, "publish", src, reg, alice)
	if code != 1 || !strings.HasPrefix(out, validated) || !strings.Contains(errs, "has error diagnostics: not published (--allow-errors") {
		t.Fatalf("publish of a plugin with errors: exit %d\nstdout %q\nwant it to start with %q\nstderr %q", code, out, validated, errs)
	}
	if _, catalog, _ := runCLI(t, "catalog", reg); catalog != "" {
		t.Fatalf("the refused plugin reached the registry: %q", catalog)
	}
	code, out, _ = runCLI(t, "publish", src, reg, alice, "--json")
	var doc command.ErrorDoc
	if code != 1 || json.Unmarshal([]byte(out), &doc) != nil || doc.Error.Code != command.CodeInvalid || len(doc.Diagnostics) != 1 {
		t.Fatalf("publish --json of a plugin with errors: exit %d %s", code, out)
	}
	code, out, errs = runCLI(t, "publish", src, reg, alice, "--allow-errors")
	if code != 0 || !strings.HasPrefix(out, validated) || !strings.Contains(out, "published hello@0.1.0\n") {
		t.Fatalf("publish --allow-errors: exit %d %q %q", code, out, errs)
	}
	code, out, _ = runCLI(t, "publish", src, reg, alice, "--allow-errors", "--json")
	var res struct {
		distribution.PublishResult
		Diagnostics []agentplugin.Diagnostic
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Diagnostics) != 1 || res.Created {
		t.Fatalf("publish --json --allow-errors: exit %d %s", code, out)
	}
	// A rejected plugin is never sent, --allow-errors or not.
	bad := clitest.WritePlugin(t, map[string]string{"plugin.json": `{"name": "Bad Name"}`})
	if code, out, _ := runCLI(t, "publish", bad, reg, alice, "--allow-errors"); code != 1 || !strings.Contains(out, "error[") {
		t.Fatalf("publish of a rejected plugin: exit %d %q", code, out)
	}
	// An archive is judged the same way.
	archivePath := filepath.Join(t.TempDir(), "hello.tar.gz")
	if code, _, errs := runCLI(t, "pack", src, "-o", archivePath, "--allow-errors"); code != 0 {
		t.Fatalf("pack: %s", errs)
	}
	if code, out, _ := runCLI(t, "publish", archivePath, reg, alice); code != 1 || !strings.Contains(out, "error[skill-name-mismatch]") {
		t.Fatalf("publish of an archive with errors: exit %d %q", code, out)
	}
}

// TestRegistryErrorMessages: every registry refusal
// printed "HTTP 404 Not Found (not_found)" or "HTTP 401 Unauthorized". The
// CLI knows what it asked, and now says what is wrong.
func TestRegistryErrorMessages(t *testing.T) {
	url := clitest.NewRegistry(t)
	reg := "--registry=" + url
	src := clitest.WritePlugin(t, map[string]string{"plugin.json": `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "kv", "version": "1.0.0"}`})
	if code, _, errs := runCLI(t, "publish", src, reg, clitest.TokenFile(t, clitest.AliceToken), "--channel", "beta"); code != 0 {
		t.Fatal(errs)
	}
	missing := "sha256:" + strings.Repeat("0", 64)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"resolve", "kv"}, "no release of kv on channel stable (channels: beta)"},
		{[]string{"resolve", "nope"}, "no plugin nope on this registry"},
		{[]string{"resolve", "kv", "--release", "9.9.9"}, "no release kv@9.9.9 (releases: kv@1.0.0)"},
		{[]string{"fetch", "kv", filepath.Join(t.TempDir(), "x")}, "no release of kv on channel stable (channels: beta)"},
		{[]string{"fetch", missing, filepath.Join(t.TempDir(), "x")}, "no artifact " + missing + " on this registry"},
		{[]string{"publish", src}, "this registry needs a token: set PLUGKIT_TOKEN or --token-file"},
		{[]string{"publish", src, clitest.TokenFile(t, "wrong")}, "the registry does not accept this token: check PLUGKIT_TOKEN or --token-file"},
		{[]string{"publish", src, clitest.TokenFile(t, clitest.ReaderToken)}, "this token may not publish: that needs a publisher token"},
		{[]string{"yank", "kv@1.0.0", clitest.TokenFile(t, clitest.BobToken)}, "kv belongs to other publishers: an admin can grant"},
		{[]string{"channel", "set", "kv", "stable", "2.0.0", clitest.TokenFile(t, clitest.AliceToken)}, "no release kv@2.0.0 (releases: kv@1.0.0)"},
		{[]string{"owners", "grant", "kv", "bob", clitest.TokenFile(t, clitest.AliceToken)}, "this token may not change owners: that needs an admin token"},
		{[]string{"installations"}, "this registry needs a token"},
	} {
		code, _, errs := runCLI(t, append(c.args, reg)...)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("plugkit %s: exit %d, stderr %q, want %q", strings.Join(c.args, " "), code, errs, c.want)
		}
		if strings.Contains(errs, "HTTP 4") {
			t.Errorf("plugkit %s: stderr %q still says only the status", strings.Join(c.args, " "), errs)
		}
	}
}

func TestChannelAndYankVerbs(t *testing.T) {
	url := clitest.NewRegistry(t)
	reg, alice := "--registry="+url, clitest.TokenFile(t, clitest.AliceToken)
	for _, v := range []string{"1.0.0", "2.0.0"} {
		src := clitest.WritePlugin(t, map[string]string{"plugin.json": `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "kv", "version": "` + v + `"}`})
		if code, _, errs := runCLI(t, "publish", src, reg, alice); code != 0 {
			t.Fatal(errs)
		}
	}
	if code, out, errs := runCLI(t, "channel", "set", "kv", "beta", "1.0.0", reg, alice); code != 0 || out != "kv: beta now points at kv@1.0.0\n" {
		t.Fatalf("channel set: exit %d %q %s", code, out, errs)
	}
	code, out, _ := runCLI(t, "channel", "set", "kv", "stable", "kv@1.0.0", reg, alice, "--json")
	var rel distribution.Release
	if code != 0 || json.Unmarshal([]byte(out), &rel) != nil || rel.ID != "kv@1.0.0" {
		t.Fatalf("channel set --json: exit %d %s", code, out)
	}
	for _, args := range [][]string{
		{"channel", "set", "kv", "beta"},
		{"channel", "set", "kv", "Bad Channel", "1.0.0"},
		{"channel", "nosuch"},
		{"yank"},
		{"yank", "not-a-release"},
	} {
		if code, _, _ := runCLI(t, append(args, reg, alice)...); code != 2 {
			t.Errorf("plugkit %s: exit %d, want 2", strings.Join(args, " "), code)
		}
	}
	if code, out, _ := runCLI(t, "yank", "kv@1.0.0", reg, alice); code != 0 || out != "yanked kv@1.0.0\n" {
		t.Fatalf("yank: exit %d %q", code, out)
	}
	if code, _, errs := runCLI(t, "resolve", "kv", reg); code != 1 || !strings.Contains(errs, "no release of kv on channel stable (channels: none)") {
		t.Fatalf("resolve after yank: exit %d %s", code, errs)
	}
	if code, _, errs := runCLI(t, "channel", "set", "kv", "beta", "1.0.0", reg, alice); code != 1 || !strings.Contains(errs, "kv@1.0.0 is yanked: restore it first (plugkit yank --undo kv@1.0.0)") {
		t.Fatalf("channel set to a yanked release: exit %d %s", code, errs)
	}
	if code, out, _ := runCLI(t, "yank", "kv@1.0.0", "--undo", reg, alice); code != 0 || out != "restored kv@1.0.0\n" {
		t.Fatalf("yank --undo: exit %d %q", code, out)
	}
	if code, out, _ := runCLI(t, "resolve", "kv", reg); code != 0 || !strings.Contains(out, "release: kv@1.0.0\n") {
		t.Fatalf("resolve after --undo: exit %d %q", code, out)
	}
}

func TestOwnersVerbs(t *testing.T) {
	url := clitest.NewRegistry(t)
	reg, alice, bob, root := "--registry="+url, clitest.TokenFile(t, clitest.AliceToken), clitest.TokenFile(t, clitest.BobToken), clitest.TokenFile(t, clitest.AdminToken)
	src := clitest.WritePlugin(t, map[string]string{"plugin.json": clitest.HelloManifest})
	if code, _, errs := runCLI(t, "publish", src, reg, alice); code != 0 {
		t.Fatal(errs)
	}
	if code, out, _ := runCLI(t, "owners", "list", "hello", reg, bob); code != 0 || out != "hello: owners: alice\n" {
		t.Fatalf("owners list: exit %d %q", code, out)
	}
	if code, out, _ := runCLI(t, "owners", "grant", "hello", "bob", reg, root); code != 0 || out != "hello: owners: alice, bob\n" {
		t.Fatalf("owners grant: exit %d %q", code, out)
	}
	if code, _, errs := runCLI(t, "yank", "hello@0.1.0", reg, bob); code != 0 {
		t.Fatalf("bob after the grant: %s", errs)
	}
	code, out, _ := runCLI(t, "owners", "transfer", "hello", "bob", reg, root, "--json")
	var o distribution.Owners
	if code != 0 || json.Unmarshal([]byte(out), &o) != nil || len(o.Owners) != 1 || o.Owners[0] != "bob" {
		t.Fatalf("owners transfer --json: exit %d %s", code, out)
	}
	if code, out, _ := runCLI(t, "owners", "revoke", "hello", "bob", reg, root); code != 0 || out != "hello: owners: none (admin-only)\n" {
		t.Fatalf("owners revoke: exit %d %q", code, out)
	}
	for _, args := range [][]string{{"owners", "grant", "hello", "not valid"}, {"owners", "steal", "hello", "x"}, {"owners", "list"}} {
		if code, _, _ := runCLI(t, append(args, reg, root)...); code != 2 {
			t.Errorf("plugkit %s: exit %d, want 2", strings.Join(args, " "), code)
		}
	}
	if code, _, errs := runCLI(t, "owners", "list", "nope", reg, root); code != 1 || !strings.Contains(errs, "no plugin nope on this registry") {
		t.Fatalf("owners of an unknown plugin: exit %d %s", code, errs)
	}
}

func TestInstallationsVerb(t *testing.T) {
	url := clitest.NewRegistry(t)
	reg := "--registry=" + url
	src := clitest.WritePlugin(t, map[string]string{"plugin.json": clitest.HelloManifest})
	if code, _, errs := runCLI(t, "publish", src, reg, clitest.TokenFile(t, clitest.AliceToken)); code != 0 {
		t.Fatal(errs)
	}
	c := &distribution.Client{BaseURL: url, Token: clitest.ReaderToken}
	if _, err := c.ReportInstallation(t.Context(), distribution.Installation{ID: "laptop/hello", PluginID: "hello",
		ReleaseID: "hello@0.1.0", ArtifactDigest: "sha256:" + strings.Repeat("a", 64), Status: "installed", Host: "laptop"}); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "installations", "hello", reg, clitest.TokenFile(t, clitest.ReaderToken))
	if code != 0 || !strings.HasPrefix(out, "PLUGIN") || !strings.Contains(out, "hello@0.1.0") || !strings.Contains(out, "laptop") {
		t.Fatalf("installations: exit %d %q %s", code, out, errs)
	}
	code, out, _ = runCLI(t, "installations", reg, clitest.TokenFile(t, clitest.ReaderToken), "--json")
	var list distribution.Installations
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list.Installations) != 1 || list.Installations[0].Reporter != "host" ||
		list.Installations[0].Host != "laptop" {
		t.Fatalf("installations --json: exit %d %s", code, out)
	}
	if code, _, _ := runCLI(t, "installations", "Bad!", reg); code != 2 {
		t.Fatalf("installations of a malformed id: exit %d", code)
	}
}

// TestRegistryTextIsTerminalSafe, for the registry verbs: text from a registry reaches the terminal escaped; --json stays
// exact.
func TestRegistryTextIsTerminalSafe(t *testing.T) {
	digest := "sha256:" + strings.Repeat("a", 64)
	evil := distribution.Release{ID: "kv@1.0.0\x1b]0;owned\x07", PluginID: "kv", Version: "1.0.0\x1b]0;owned\x07", ArtifactDigest: digest}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case distribution.Prefix + "/catalog":
			json.NewEncoder(w).Encode(distribution.Catalog{Plugins: []distribution.CatalogPlugin{{
				ID: "kv", Name: "kv", Description: "\x1b[2J\u202eevil", Channels: map[string]string{"stable\x1b[31m": "kv@1"},
				Releases: []distribution.Release{evil},
			}}})
		case distribution.Prefix + "/resolve":
			json.NewEncoder(w).Encode(evil)
		case distribution.Prefix + "/installations":
			json.NewEncoder(w).Encode(distribution.Installations{Installations: []distribution.Installation{{
				ID: "x\x1b[2J", PluginID: "kv", Host: "laptop\x1b]0;owned\x07", Reporter: "\u202eevil"}}})
		}
	}))
	defer ts.Close()
	for _, args := range [][]string{{"catalog"}, {"resolve", "kv", "--release", "kv@1.0.0"}, {"resolve", "kv"}, {"installations"}} {
		_, out, errs := runCLI(t, append(args, "--registry", ts.URL)...)
		if strings.ContainsAny(out+errs, "\x1b\x07\u202e") || !strings.Contains(out+errs, `\x1b`) {
			t.Errorf("plugkit %s: want control characters shown escaped: %q %q", strings.Join(args, " "), out, errs)
		}
	}
	_, out, _ := runCLI(t, "catalog", "--registry", ts.URL, "--json")
	if !strings.Contains(out, `\u001b[2J`) {
		t.Fatalf("--json must stay exact: %s", out)
	}
}
