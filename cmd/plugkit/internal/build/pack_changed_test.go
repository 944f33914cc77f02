package build

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/snapshot"
)

// pack reads the plugin before it writes the archive, and streams every
// file it did not hold from the directory then. A file that changed in
// between (grown, shrunk, replaced by a link inside or out of the plugin
// or by a directory, removed) fails the pack with ErrChanged and exit 1,
// and leaves neither the archive nor a temporary file.
func TestPackChangedFileWritesNothing(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(tool string) error
	}{
		{"grown", func(p string) error { return os.WriteFile(p, []byte("#!/bin/sh\necho hi there\n"), 0o755) }},
		{"shrunk", func(p string) error { return os.Truncate(p, 3) }},
		{"link-inside", func(p string) error { return relink(p, "../plugin.json") }},
		{"link-escaping", func(p string) error { return relink(p, "/etc/hostname") }},
		{"directory", func(p string) error { os.Remove(p); return os.Mkdir(p, 0o755) }},
		{"removed", os.Remove},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := clitest.WritePackPlugin(t, clitest.PackManifest)
			outDir := t.TempDir()
			out := filepath.Join(outDir, "demo.tar.gz")
			_, part, err := loadPackPartial(dir, PackDirOptions{Exclude: out})
			if err != nil {
				t.Fatal(err)
			}
			defer part.Close()
			if err := c.change(filepath.Join(dir, "bin/tool")); err != nil {
				t.Fatal(err)
			}
			_, err = packToFile(out, part, "")
			if !errors.Is(err, snapshot.ErrChanged) || command.ExitCode(err) != command.ExitFailed {
				t.Fatalf("err = %v (exit %d), want bin/tool changed, exit 1", err, command.ExitCode(err))
			}
			if entries, _ := os.ReadDir(outDir); len(entries) != 0 {
				t.Errorf("left %v beside the archive", entries[0].Name())
			}
		})
	}
}

func relink(p, target string) error {
	os.Remove(p)
	return os.Symlink(target, p)
}

// pack holds the bytes of exactly the files the loader reads
// (plugin.json, mcp.json, skills/*/SKILL.md) and packs those bytes: a
// plugin.json rewritten after the plugin was judged does not reach the
// archive, so the archive is the plugin that was validated.
func TestPackHoldsWhatTheLoaderRead(t *testing.T) {
	dir := clitest.WritePackPlugin(t, clitest.PackManifest)
	out := filepath.Join(t.TempDir(), "demo.tar.gz")
	pkg, part, err := loadPackPartial(dir, PackDirOptions{Exclude: out})
	if err != nil {
		t.Fatal(err)
	}
	defer part.Close()
	if got := part.Held.Paths(); !reflect.DeepEqual(got, []string{"plugin.json", "skills/greet/SKILL.md"}) {
		t.Errorf("held %q, want plugin.json and skills/greet/SKILL.md", got)
	}
	if pkg.Name != "demo" {
		t.Fatalf("loaded %q", pkg.Name)
	}
	rewritten := `{"$schema":"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json","name":"evil","version":"6.6.6"}`
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(rewritten), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := packToFile(out, part, ""); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s, err := archive.Unpack(b, archive.UnpackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(s.Files["plugin.json"]); got != clitest.PackManifest {
		t.Errorf("packed plugin.json %s, want the one validated", got)
	}
}
