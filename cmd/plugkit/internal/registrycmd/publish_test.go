package registrycmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
)

// TestPublishShowsWhatValidateShows, with a plugin that holds a reserved
// env name, a plain-http URL and a command without
// an execute bit were published without a word. publish prints validate's
// diagnostics and refuses the errors among them.
func TestPublishShowsWhatValidateShows(t *testing.T) {
	reg, alice := "--registry="+clitest.NewRegistry(t), clitest.TokenFile(t, clitest.AliceToken)
	src := clitest.WritePlugin(t, map[string]string{
		"plugin.json": `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "kv", "version": "1.0.0"}`,
		"mcp.json": `{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {
			"db": {"type": "stdio", "command": "./bin/db", "env": {"PLUGIN_ROOT": "/elsewhere"}},
			"api": {"type": "streamable-http", "url": "http://api.example.com/mcp"}}}`,
		"bin/db": "#!/bin/sh\n",
	})
	_, validated, _ := runCLI(t, "validate", src)
	for _, code := range []string{"error[mcp-env-reserved]", "error[mcp-url-insecure]", "warning[mcp-command-not-executable]"} {
		if !strings.Contains(validated, code) {
			t.Fatalf("validate does not report %s:\n%s", code, validated)
		}
	}
	code, out, errs := runCLI(t, "publish", src, reg, alice)
	if code != command.ExitFailed || out != validated || !strings.Contains(errs, "not published") {
		t.Fatalf("publish: exit %d\nstdout %q\nwant validate's %q\nstderr %q", code, out, validated, errs)
	}
	if _, catalog, _ := runCLI(t, "catalog", reg); catalog != "" {
		t.Fatalf("the refused plugin reached the registry: %q", catalog)
	}
}

// TestPublishLinkRule: a link that stays
// inside the plugin is published as the file it points to, and
// --strict-links refuses it, as pack does.
func TestPublishLinkRule(t *testing.T) {
	reg, alice := "--registry="+clitest.NewRegistry(t), clitest.TokenFile(t, clitest.AliceToken)
	src := clitest.WritePlugin(t, map[string]string{"plugin.json": clitest.HelloManifest, "LICENSE": "MIT\n"})
	if err := os.Symlink("LICENSE", filepath.Join(src, "COPYING")); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runCLI(t, "publish", src, reg, alice, "--strict-links"); code != command.ExitFailed || !strings.Contains(out+errs, "COPYING") {
		t.Fatalf("publish --strict-links: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := runCLI(t, "publish", src, reg, alice); code != 0 || strings.Contains(out, "warning[") {
		t.Fatalf("publish: exit %d\n%s%s", code, out, errs)
	}
	dest := filepath.Join(t.TempDir(), "hello")
	if code, _, errs := runCLI(t, "fetch", "hello", dest, reg); code != 0 {
		t.Fatalf("fetch: %s", errs)
	}
	fi, err := os.Lstat(filepath.Join(dest, "COPYING"))
	if b, _ := os.ReadFile(filepath.Join(dest, "COPYING")); err != nil || !fi.Mode().IsRegular() || string(b) != "MIT\n" {
		t.Fatalf("COPYING was not published as the file it points to: %v %v %q", err, fi, b)
	}
}
