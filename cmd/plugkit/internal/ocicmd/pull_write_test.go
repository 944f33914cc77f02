package ocicmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/oci"
	"github.com/plugkit/plugkit/snapshot"
)

// Pull writes the layer's files as it unpacks them, before it loads the
// plugin: a plugin rejected then (here a plugin.json without $schema, in
// a layout built by hand, as push refuses to build it) exits 1 and leaves
// nothing, no DIR and no temporary sibling; the valid plugin beside it
// is written whole.
func TestPullRejectedPluginLeavesNothing(t *testing.T) {
	clitest.OCIEnv(t)
	pkg, err := agentplugin.LoadDir(clitest.ExamplePlugin(), agentplugin.Options{Read: snapshot.Options{Strict: true}})
	if err != nil {
		t.Fatal(err)
	}
	bad := &snapshot.Snapshot{Files: map[string][]byte{}, Modes: pkg.Snapshot.Modes}
	for p, b := range pkg.Snapshot.Files {
		bad.Files[p] = b
	}
	bad.Files["plugin.json"] = []byte(`{"name": "release-notes"}`) // no $schema
	// layoutOf builds the example plugin with snapshot s into a layout.
	layoutOf := func(s *snapshot.Snapshot) string {
		layout := filepath.Join(t.TempDir(), "layout")
		l, err := oci.OpenLayout(context.Background(), layout, true)
		if err != nil {
			t.Fatal(err)
		}
		p := *pkg
		p.Snapshot = s
		a, err := oci.Build(&p, oci.BuildOptions{})
		if err == nil {
			_, err = oci.Push(context.Background(), l, a, "1.2.0")
		}
		if err == nil {
			err = l.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		return layout
	}

	parent := t.TempDir()
	code, stdout, stderr := runCLI(t, "pull", "oci-layout:"+layoutOf(bad)+":1.2.0", filepath.Join(parent, "out"), "--json")
	if code != 1 || !strings.Contains(stdout, `"plugin-rejected"`) {
		t.Errorf("rejected plugin: exit %d\n%s%s", code, stdout, stderr)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
	dir := filepath.Join(parent, "good")
	mustRun(t, "pull", "oci-layout:"+layoutOf(pkg.Snapshot)+":1.2.0", dir)
	if got, err := snapshot.ReadDir(dir, snapshot.Options{Strict: true}); err != nil || !got.Equal(pkg.Snapshot) {
		t.Errorf("pulled %v (%v), want the example", got.Paths(), err)
	}

	// Pull writes the files as the layer arrives, before its digest is
	// known: a layer that is not the one the manifest names (here a valid
	// archive of another plugin.json, padded to the same size) exits 1
	// and leaves nothing either.
	lie := layoutOf(pkg.Snapshot)
	other := &snapshot.Snapshot{Files: map[string][]byte{"plugin.json": bad.Files["plugin.json"], "README.md": []byte("evil")}}
	evil, err := archive.Pack(other, archive.PackOptions{Root: "release-notes"})
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := filepath.Glob(filepath.Join(lie, "blobs", "sha256", "*"))
	replaced := false
	for _, blob := range layers {
		b, err := os.ReadFile(blob)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > len(evil) && bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
			replaced = os.WriteFile(blob, append(evil, make([]byte, len(b)-len(evil))...), 0o644) == nil
		}
	}
	if !replaced {
		t.Fatal("no layer to replace")
	}
	code, stdout, stderr = runCLI(t, "pull", "oci-layout:"+lie+":1.2.0", filepath.Join(parent, "lie"))
	if code != 1 || !strings.Contains(stderr, "hashes to") {
		t.Errorf("layer digest lie: exit %d\n%s%s", code, stdout, stderr)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}
