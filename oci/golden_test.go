package oci_test

import (
	"context"
	"errors"
	"testing"

	"github.com/plugkit/plugkit/oci"
)

const signedTar = "testdata/cosign/signed-plugin.tar"

// signed-plugin.tar (oras and cosign wrote it) pulls to
// examples/release-notes byte for byte, by tag, by digest or with nothing:
// its index lists one plugin manifest, the signature is no candidate.
func TestPullGoldenLayoutTar(t *testing.T) {
	ctx := context.Background()
	lay, err := oci.OpenLayout(ctx, signedTar, false)
	if err != nil {
		t.Fatal(err)
	}
	want := examplePackage(t).Snapshot
	for _, sel := range []string{"", "1.2.0", "@" + goldenManifest, "1.2.0@" + goldenManifest} {
		p, err := oci.Pull(ctx, lay, sel, oci.PullOptions{})
		if err != nil {
			t.Fatalf("selector %q: %v", sel, err)
		}
		if p.Descriptor.Digest.String() != goldenManifest || p.Package.Name != "release-notes" || p.Package.Version != "1.2.0" {
			t.Fatalf("selector %q: %s %s %s", sel, p.Descriptor.Digest, p.Package.Name, p.Package.Version)
		}
		sameSnapshot(t, p.Package.Snapshot, want)
		if p.Package.Snapshot.Mode("bin/git-log-server")&0o111 == 0 {
			t.Error("bin/git-log-server is not executable")
		}
	}
	// The signature manifest is no plugin, and a wrong tag is not found.
	if _, err := oci.Pull(ctx, lay, "@"+goldenReferrer, oci.PullOptions{}); !errors.Is(err, oci.ErrNotPlugin) {
		t.Errorf("pull of the signature: %v", err)
	}
	if _, err := oci.Pull(ctx, lay, "9.9.9", oci.PullOptions{}); !errors.Is(err, oci.ErrNoPlugin) {
		t.Errorf("pull of a missing tag: %v", err)
	}
	if _, err := oci.Pull(ctx, lay, "1.2.0@"+goldenReferrer, oci.PullOptions{}); !errors.Is(err, oci.ErrReference) {
		t.Errorf("tag and digest that disagree: %v", err)
	}
}

// Copy carries the plugin and cosign's signature from the golden tar into
// a layout directory with digests unchanged, and the directory reads back.
func TestCopyGoldenTarToLayoutKeepsTheSignature(t *testing.T) {
	ctx := context.Background()
	src, err := oci.OpenLayout(ctx, signedTar, false)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir() + "/layout"
	c := copyToLayout(t, src, "1.2.0", dir, "1.2.0")
	if len(c.Referrers) != 1 || c.Referrers[0].Digest.String() != goldenReferrer || c.Referrers[0].ArtifactType != "application/vnd.dev.sigstore.bundle.v0.3+json" {
		t.Fatalf("referrers %+v", c.Referrers)
	}
	back, err := oci.OpenLayout(ctx, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := oci.Pull(ctx, back, "", oci.PullOptions{})
	if err != nil || p.Descriptor.Digest.String() != goldenManifest {
		t.Fatalf("pull back: %v", err)
	}
	preds, err := back.Predecessors(ctx, p.Descriptor)
	if err != nil || len(preds) != 1 || preds[0].Digest.String() != goldenReferrer {
		t.Fatalf("referrers in the copy: %v %v", preds, err)
	}
}
