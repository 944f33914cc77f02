package source

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/internal/testservice"
	"github.com/plugkit/plugkit/oci"
)

// demoArtifact is the demo plugin built as an OCI artifact.
func demoArtifact(t *testing.T) *oci.Artifact {
	t.Helper()
	pkg, err := agentplugin.Load(demoSnapshot(t), agentplugin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := oci.Build(pkg, oci.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// An oci-layout: and an oci:// source open to the plugin, with the
// manifest digest as identity and the layer as the archive.
func TestOpenOCISources(t *testing.T) {
	ctx := context.Background()
	a := demoArtifact(t)
	dir := filepath.Join(t.TempDir(), "layout")
	lay, err := oci.OpenLayout(ctx, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oci.Push(ctx, lay, a, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	lay.Close()
	reg := testservice.StartRegistry(t)
	repo, _ := oci.NewRepository(reg.Host+"/plugins/demo", oci.RemoteOptions{PlainHTTP: true})
	if _, err := oci.Push(ctx, repo, a, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{"oci-layout:" + dir, "oci-layout:" + dir + ":1.0.0", "oci-layout:" + dir + "@" + a.Descriptor.Digest.String(),
		"oci://" + reg.Host + "/plugins/demo:1.0.0"} {
		src, err := Parse(arg, ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := Open(ctx, src, Options{Remote: oci.RemoteOptions{PlainHTTP: true}})
		if err != nil {
			t.Fatalf("%s: %v", arg, err)
		}
		if p.Identity != a.Descriptor.Digest.String() || p.Package.Name != "demo" || len(p.Archive) != len(a.Layer) || p.OCI == nil {
			t.Errorf("%s: identity %s, name %s", arg, p.Identity, p.Package.Name)
		}
		if !p.Package.Snapshot.Equal(demoSnapshot(t)) {
			t.Errorf("%s: files %v", arg, p.Package.Snapshot.Paths())
		}
	}
	// HTTPS is the default: the plain-HTTP test registry does not answer it.
	src, _ := Parse("oci://"+reg.Host+"/plugins/demo:1.0.0", ParseOptions{})
	if _, err := Open(ctx, src, Options{}); err == nil {
		t.Error("HTTPS to a plain-HTTP registry succeeded")
	}
	// A missing tag is no plugin.
	src, _ = Parse("oci-layout:"+dir+":2.0.0", ParseOptions{})
	if _, err := Open(ctx, src, Options{}); !errors.Is(err, oci.ErrNoPlugin) {
		t.Errorf("missing tag: %v", err)
	}
}

// A layer archive rooted at NAME/ (what `oras pull` saves) reads as the
// plugin; rooted at another name, it is refused.
func TestOpenRootedLayerArchive(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for root, ok := range map[string]bool{"demo": true, "other": false} {
		b, err := archive.Pack(demoSnapshot(t), archive.PackOptions{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, root+".tar.gz")
		os.WriteFile(path, b, 0o644)
		p, err := Open(ctx, Source{Kind: Path, Path: path}, Options{})
		if !ok {
			if !errors.Is(err, ErrArchive) {
				t.Errorf("root %s: %v", root, err)
			}
			continue
		}
		if err != nil || p.Root != "demo" || !p.Package.Snapshot.Equal(demoSnapshot(t)) {
			t.Fatalf("root %s: %v", root, err)
		}
	}
}
