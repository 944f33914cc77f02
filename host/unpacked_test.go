package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/snapshot"
)

// TestUnpackedRunsAnArchive: a plugin loaded from an archive (its files in
// memory only) runs its stdio servers from the private copy Unpacked
// writes, and remove leaves nothing.
func TestUnpackedRunsAnArchive(t *testing.T) {
	dir := writePlugin(t, pluginSpec{name: "packed", servers: `{"one": {"type": "stdio", "command": "./bin/server"}}`,
		skills: map[string]string{"jot": "Jot things down."}})
	s, err := snapshot.ReadDir(dir, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := archive.Pack(s, archive.PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	unpacked, err := archive.Unpack(data, archive.UnpackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := agentplugin.Load(unpacked, agentplugin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	p, remove, err := Unpacked(pkg, scratch, archive.Digest(data))
	if err != nil {
		t.Fatal(err)
	}
	p.DataDir = filepath.Join(t.TempDir(), "data")
	h := newHost(t, []Plugin{p}, Options{})
	tools, err := h.Tools(context.Background())
	if err != nil || len(tools) == 0 {
		t.Fatalf("tools of the unpacked plugin: %d, %v", len(tools), err)
	}
	if _, err := h.Skill("packed/jot"); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := remove(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(scratch); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// TestUnpackedLeavesNothingOnError: a directory that cannot hold the copy
// is an error, and no partial copy stays.
func TestUnpackedLeavesNothingOnError(t *testing.T) {
	pkg := loadPlugin(t, writePlugin(t, pluginSpec{name: "x"})).Package
	if _, _, err := Unpacked(pkg, filepath.Join(t.TempDir(), "missing", "dir"), ""); err == nil {
		t.Fatal("unpacked into a directory that does not exist")
	}
}
