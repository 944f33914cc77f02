package main

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry"
)

// newRegistry starts an in-process registry on 127.0.0.1 whose publisher
// token is "pub".
func newRegistry(t *testing.T) string {
	t.Helper()
	db, blobs, err := registry.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h, err := registry.New(registry.Config{Store: db, Blobs: blobs, PublishTokens: []string{"pub"}, AnonymousRead: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

func regCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestRegistryVerbs(t *testing.T) {
	url := newRegistry(t)
	src := filepath.Join(t.TempDir(), "hello")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "plugin.json"), []byte(`{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "hello", "version": "0.1.0"}`), 0o644)
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("pub\n"), 0o600)

	if _, _, code := regCLI(t, "publish", src); code != 2 {
		t.Fatalf("publish without --registry: exit %d, want 2", code)
	}
	if _, _, code := regCLI(t, "publish", src, "--registry", url, "--channel", "Not Valid"); code != 2 {
		t.Fatalf("bad channel: exit %d, want 2", code)
	}
	if _, errs, code := regCLI(t, "publish", src, "--registry", url); code != 1 || !strings.Contains(errs, "401") {
		t.Fatalf("publish without a token: exit %d %s", code, errs)
	}
	out, errs, code := regCLI(t, "publish", src, "--registry", url, "--token-file", tokenFile, "--channel", "beta", "--json")
	var res distribution.PublishResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Channel != "beta" || !res.Created {
		t.Fatalf("publish: exit %d %q %s", code, out, errs)
	}
	out, _, code = regCLI(t, "resolve", "hello", "--channel", "beta", "--registry", url, "--json")
	var rel distribution.Release
	if code != 0 || json.Unmarshal([]byte(out), &rel) != nil || rel.ArtifactDigest != res.Release.ArtifactDigest {
		t.Fatalf("resolve: exit %d %q", code, out)
	}
	if _, _, code := regCLI(t, "resolve", "hello", "--channel", "beta", "--release", "hello@0.1.0", "--registry", url); code != 2 {
		t.Fatalf("--channel with --release: exit %d, want 2", code)
	}
	out, _, code = regCLI(t, "catalog", "--registry", url, "--json")
	var cat distribution.Catalog
	if code != 0 || json.Unmarshal([]byte(out), &cat) != nil || cat.Plugins[0].Channels["beta"] != "hello@0.1.0" {
		t.Fatalf("catalog: exit %d %q", code, out)
	}
	dst := filepath.Join(t.TempDir(), "out")
	if out, errs, code := regCLI(t, "fetch", "hello", dst, "--channel", "beta", "--registry", url); code != 0 {
		t.Fatalf("fetch: exit %d %s %s", code, out, errs)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "plugin.json")); err != nil || !bytes.Contains(b, []byte(`"hello"`)) {
		t.Fatalf("fetched plugin.json: %q %v", b, err)
	}
	if _, _, code := regCLI(t, "fetch", "Not A Plugin", filepath.Join(t.TempDir(), "x"), "--registry", url); code != 2 {
		t.Fatalf("fetch of a malformed name: exit %d, want 2", code)
	}
	if _, _, code := regCLI(t, "catalog", "--registry", "http://plugins.example.com"); code != 1 {
		t.Fatalf("plain http off loopback: exit %d, want 1", code)
	}
}

func TestServeHelp(t *testing.T) {
	out, _, code := regCLI(t, "serve", "--help")
	if code != 0 || !strings.Contains(out, "PLUGKIT_PUBLISH_TOKENS") || !strings.Contains(out, "Example") && !strings.Contains(out, "Examples") {
		t.Fatalf("serve --help: exit %d %q", code, out)
	}
	if _, _, code := regCLI(t, "serve", "--tls-cert", "x"); code != 2 {
		t.Fatalf("--tls-cert without --tls-key: exit %d", code)
	}
}
