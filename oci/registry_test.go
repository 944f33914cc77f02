package oci_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/plugkit/plugkit/internal/testservice"
	"github.com/plugkit/plugkit/oci"
)

// repository opens NAME on a test registry over plain HTTP.
func repository(t testing.TB, reg *testservice.Registry, name string) *oci.Repository {
	t.Helper()
	r, err := oci.NewRepository(reg.Host+"/"+name, oci.RemoteOptions{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Push then pull against a real registry: the manifest digest is the
// built one, tag and digest resolve to it, and the plugin reads back.
func TestRegistryPushPull(t *testing.T) {
	ctx := context.Background()
	reg := testservice.StartRegistry(t)
	repo := repository(t, reg, "plugins/release-notes")
	a := exampleArtifact(t)
	d := mustPush(t, repo, a, "1.2.0")
	if d.Digest != a.Descriptor.Digest {
		t.Fatalf("pushed %s, built %s", d.Digest, a.Descriptor.Digest)
	}
	for _, sel := range []string{"1.2.0", "@" + a.Descriptor.Digest.String(), "1.2.0@" + a.Descriptor.Digest.String()} {
		p, err := oci.Pull(ctx, repo, sel, oci.PullOptions{})
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		if p.Descriptor.Digest != a.Descriptor.Digest {
			t.Fatalf("%s: digest %s", sel, p.Descriptor.Digest)
		}
		sameSnapshot(t, p.Package.Snapshot, examplePackage(t).Snapshot)
	}
	if _, err := oci.Pull(ctx, repo, "", oci.PullOptions{}); !errors.Is(err, oci.ErrReference) {
		t.Errorf("no selector: %v", err)
	}
	if _, err := oci.Pull(ctx, repo, "nosuch", oci.PullOptions{}); !errors.Is(err, oci.ErrNoPlugin) {
		t.Errorf("missing tag: %v", err)
	}
	// A second push of the same plugin, built again, is the same manifest.
	again := mustPush(t, repo, exampleArtifact(t), "latest")
	if again.Digest != d.Digest {
		t.Errorf("second push %s, first %s", again.Digest, d.Digest)
	}
}

// recordingTransport records the method and path of every request.
type recordingTransport struct {
	mu   sync.Mutex
	reqs []string
}

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.mu.Lock()
	rt.reqs = append(rt.reqs, r.Method+" "+r.URL.Path)
	rt.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// Pulling by tag from a registry takes three requests: the manifest by
// tag (its descriptor from the response, no HEAD first), the config, the
// layer.
func TestPullByTagRequests(t *testing.T) {
	ctx := context.Background()
	reg := testservice.StartRegistry(t)
	a := exampleArtifact(t)
	mustPush(t, repository(t, reg, "plugins/release-notes"), a, "1.2.0")
	rt := &recordingTransport{}
	repo, err := oci.NewRepository(reg.Host+"/plugins/release-notes", oci.RemoteOptions{PlainHTTP: true, HTTPClient: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oci.Pull(ctx, repo, "1.2.0", oci.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(rt.reqs)
	base := "/v2/plugins/release-notes/"
	want := []string{"GET " + base + "blobs/" + a.ConfigDescriptor.Digest.String(), "GET " + base + "blobs/" + a.LayerDescriptor.Digest.String(), "GET " + base + "manifests/1.2.0"}
	slices.Sort(want)
	if !slices.Equal(rt.reqs, want) {
		t.Errorf("requests\n%q\nwant\n%q", rt.reqs, want)
	}
}

// A descriptor that lies about a blob's size is refused before the
// plugin is used, also when a registry serves it.
func TestRegistryRefusesSizeLie(t *testing.T) {
	ctx := context.Background()
	reg := testservice.StartRegistry(t)
	repo := repository(t, reg, "plugins/liar")
	a := exampleArtifact(t)
	mustPush(t, repo, a, "")
	l := newLayout(t)
	cfg, layer := goodBlobs(l, a)
	layer.Size--
	b := mustJSON(pluginManifest(cfg, layer))
	desc := ocispec.Descriptor{MediaType: oci.ManifestMediaType, Digest: digestOf(b), Size: int64(len(b))}
	if err := repo.PushReference(ctx, desc, bytesReader(b), "lie"); err != nil {
		t.Skipf("the registry refused the lying manifest itself: %v", err)
	}
	if _, err := oci.Pull(ctx, repo, "lie", oci.PullOptions{}); !errors.Is(err, oci.ErrDescriptor) {
		t.Fatalf("Pull = %v", err)
	}
}

// The path the air gap takes: registry → layout directory → export tar →
// another registry, digests unchanged, cosign's signature carried at each
// step (the registry has no referrers API: the tag schema is used).
func TestRegistryLayoutTarRegistryCarriesReferrers(t *testing.T) {
	ctx := context.Background()
	reg := testservice.StartRegistry(t)
	golden, err := oci.OpenLayout(ctx, signedTar, false)
	if err != nil {
		t.Fatal(err)
	}
	first := repository(t, reg, "plugins/release-notes")
	checkCopy(t, golden, "1.2.0", first, "1.2.0")

	dir := filepath.Join(t.TempDir(), "layout")
	lay, err := oci.OpenLayout(ctx, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	checkCopy(t, first, "1.2.0", lay, "1.2.0")
	lay.Close()

	fromDir, _ := oci.OpenLayout(ctx, dir, false)
	tarPath := filepath.Join(t.TempDir(), "airgap.tar")
	f, _ := os.Create(tarPath)
	if _, err := oci.Export(ctx, f, []oci.ExportItem{{Source: fromDir, Selector: "1.2.0", Name: "1.2.0"}}, "", oci.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fromTar, err := oci.OpenLayout(ctx, tarPath, false)
	if err != nil {
		t.Fatal(err)
	}
	checkCopy(t, fromTar, "1.2.0", repository(t, reg, "disconnected/release-notes"), "1.2.0")
}

// checkCopy copies sel from src to dst and checks that the plugin and its
// signature arrived with their digests.
func checkCopy(t *testing.T, src oci.GraphSource, sel string, dst oci.Store, tag string) {
	t.Helper()
	ctx := context.Background()
	c, err := oci.Copy(ctx, src, sel, dst, tag, oci.PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Plugin.Descriptor.Digest.String() != goldenManifest || len(c.Referrers) != 1 || c.Referrers[0].Digest.String() != goldenReferrer {
		t.Fatalf("copied %s with referrers %v", c.Plugin.Descriptor.Digest, c.Referrers)
	}
	d, err := dst.Resolve(ctx, tag)
	if err != nil || d.Digest.String() != goldenManifest {
		t.Fatalf("%s in the destination: %v %v", tag, d.Digest, err)
	}
	preds, err := dst.Predecessors(ctx, d)
	if err != nil || len(preds) != 1 || preds[0].Digest.String() != goldenReferrer {
		t.Fatalf("referrers in the destination: %v %v", preds, err)
	}
}

// Copy carries referrers transitively: a signature of the plugin and an
// attestation of that signature reach a layout and a registry (tag schema),
// each still listed under its own subject; a manifest of the layout that
// refers to nothing of the plugin stays behind.
func TestCopyCarriesReferrersTransitively(t *testing.T) {
	ctx := context.Background()
	a := exampleArtifact(t)
	l := newLayout(t)
	goodBlobs(l, a)
	plugin := l.manifest(oci.ManifestMediaType, a.Manifest, "1.2.0")
	empty := l.blob("application/vnd.oci.empty.v1+json", []byte("{}"))
	note := func(artifactType string, subject *ocispec.Descriptor) ocispec.Descriptor {
		m := ocispec.Manifest{Versioned: specsV2, MediaType: oci.ManifestMediaType, ArtifactType: artifactType,
			Config: empty, Layers: []ocispec.Descriptor{empty}, Subject: subject}
		d := l.manifest(oci.ManifestMediaType, m, "")
		d.ArtifactType = artifactType
		return d
	}
	sig := note("application/vnd.example.signature", &plugin)
	att := note("application/vnd.example.attestation", &sig)
	note("application/vnd.example.unrelated", nil)
	src := l.open()

	reg := testservice.StartRegistry(t)
	dir, err := oci.OpenLayout(ctx, filepath.Join(t.TempDir(), "layout"), true)
	if err != nil {
		t.Fatal(err)
	}
	for _, dst := range []oci.Store{dir, repository(t, reg, "plugins/release-notes")} {
		c, err := oci.Copy(ctx, src, "1.2.0", dst, "1.2.0", oci.PullOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Referrers) != 2 {
			t.Fatalf("%T: referrers %+v, want the signature and its attestation", dst, c.Referrers)
		}
		for _, pair := range [][2]ocispec.Descriptor{{plugin, sig}, {sig, att}} {
			preds, err := dst.Predecessors(ctx, pair[0])
			if err != nil || len(preds) != 1 || preds[0].Digest != pair[1].Digest {
				t.Errorf("%T: referrers of %s: %v %v, want %s", dst, pair[0].Digest, preds, err, pair[1].Digest)
			}
		}
	}
}

// A registry that lists a signature with its config's media type as its
// artifactType (go-containerregistry's): copy and export record the
// manifest's own artifactType, the bundle's, not the listed one.
func TestCopyRecordsReferrerTypeOfTheManifest(t *testing.T) {
	ctx := context.Background()
	reg := testservice.StartRegistry(t)
	golden, err := oci.OpenLayout(ctx, signedTar, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oci.Copy(ctx, golden, "1.2.0", repository(t, reg, "plugins/release-notes"), "1.2.0", oci.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	p := testservice.StartReferrersProxy(t, reg.Host, func(d ocispec.Descriptor) ocispec.Descriptor {
		d.ArtifactType = ocispec.MediaTypeEmptyJSON
		return d
	})
	src, err := oci.NewRepository(p.Host+"/plugins/release-notes", oci.RemoteOptions{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	const bundleType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	c := copyToLayout(t, src, "1.2.0", filepath.Join(t.TempDir(), "layout"), "1.2.0")
	if len(c.Referrers) != 1 || c.Referrers[0].ArtifactType != bundleType {
		t.Errorf("copy: referrers %+v", c.Referrers)
	}
	var b bytes.Buffer
	copied, err := oci.Export(ctx, &b, []oci.ExportItem{{Source: src, Selector: "1.2.0", Name: "plugins/release-notes:1.2.0"}}, t.TempDir(), oci.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if refs := copied[0].Referrers; len(refs) != 1 || refs[0].ArtifactType != bundleType {
		t.Errorf("export: referrers %+v", refs)
	}
	if p.Listings() == 0 {
		t.Error("the referrers were not listed through the proxy's rewrite")
	}
}
