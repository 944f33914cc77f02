package oci_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/oci"
	"github.com/plugkit/plugkit/snapshot"
)

// pullInto pulls "x" from l while writing the layer's files into the new
// directory dir, as plugkit pull does: committed when Pull accepts the
// plugin, aborted when it refuses it. It returns how many files were
// handed to the writer, and Pull's error.
func pullInto(t *testing.T, l *layoutBuilder, dir string, opts oci.PullOptions) (*oci.Plugin, int, error) {
	t.Helper()
	w, err := snapshot.CreateDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	handed := 0
	opts.OnFile = func(p string, m fs.FileMode, b []byte) error {
		handed++
		return w.WriteFile(p, m, b)
	}
	p, err := pullLayout(l, "x", opts)
	if err != nil {
		w.Abort()
		return nil, handed, err
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return p, handed, nil
}

// The layer's files are written as it is unpacked, before the plugin is
// loaded and compared with its config. A plugin refused then (rejected,
// or another plugin than the config says), like every other refusal of
// the profile, leaves nothing: no directory, no temporary sibling.
func TestPullWritingRefusalLeavesNothing(t *testing.T) {
	a := exampleArtifact(t)
	const mismatch = "plugin.json names another plugin than the config"
	cases := append(hostileArtifacts(t), hostile{
		name: mismatch,
		build: func(l *layoutBuilder, a *oci.Artifact) {
			b, err := archive.Pack(examplePackage(t).Snapshot, archive.PackOptions{Root: "other"})
			if err != nil {
				t.Fatal(err)
			}
			withLayer(l, "other", b)
		},
		want: oci.ErrConfig,
	})
	for c := range streamedOrNot(cases) {
		t.Run(c.name, func(t *testing.T) {
			l := newLayout(t)
			c.build(l, a)
			parent := t.TempDir()
			_, handed, err := pullInto(t, l, filepath.Join(parent, "out"), c.opts)
			var rej *agentplugin.RejectedError
			_, isRej := c.want.(*agentplugin.RejectedError)
			if isRej && !errors.As(err, &rej) || !isRej && !errors.Is(err, c.want) {
				t.Fatalf("Pull = %v, want %v", err, c.want)
			}
			if entries, _ := os.ReadDir(parent); len(entries) != 0 {
				t.Errorf("left behind: %v", entries)
			}
			if (isRej || c.name == mismatch) && handed == 0 {
				t.Errorf("no file was written before the refusal: the case proves nothing")
			}
		})
	}
}

// What is written while the layer is unpacked is the pulled plugin.
func TestPullWritingWritesThePlugin(t *testing.T) {
	a := exampleArtifact(t)
	l := newLayout(t)
	cfg, layer := goodBlobs(l, a)
	l.manifest(oci.ManifestMediaType, pluginManifest(cfg, layer), "x")
	dir := filepath.Join(t.TempDir(), "out")
	p, handed, err := pullInto(t, l, dir, oci.PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := snapshot.ReadDir(dir, snapshot.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if handed != len(p.Package.Snapshot.Files) || !got.Equal(p.Package.Snapshot) {
		t.Errorf("wrote %d files %v, pulled %v", handed, got.Paths(), p.Package.Snapshot.Paths())
	}
}
