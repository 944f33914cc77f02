package signcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/internal/testservice"
	"github.com/plugkit/plugkit/oci"
)

// listedAs returns a rewrite of referrers listings that gives every
// referrer the artifactType artifactType.
func listedAs(artifactType string) func(ocispec.Descriptor) ocispec.Descriptor {
	return func(d ocispec.Descriptor) ocispec.Descriptor {
		d.ArtifactType = artifactType
		return d
	}
}

// pushManifestTo pushes a manifest, its blobs first, to a registry
// repository (a manifest with a subject joins the subject's referrers).
func pushManifestTo(t *testing.T, repo *oci.Repository, manifest []byte, blobs ...[]byte) ocispec.Descriptor {
	t.Helper()
	ctx := context.Background()
	for _, b := range blobs {
		if err := repo.Push(ctx, content.NewDescriptorFromBytes("application/octet-stream", b), bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		}
	}
	d := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, manifest)
	if err := repo.Push(ctx, d, bytes.NewReader(manifest)); err != nil {
		t.Fatal(err)
	}
	return d
}

// pushSBOM attaches an artifact that is no signature (an SPDX SBOM with
// an empty config, as cosign and oras attach them) to subject.
func pushSBOM(t *testing.T, repo *oci.Repository, subject ocispec.Descriptor, n int) ocispec.Descriptor {
	t.Helper()
	cfg, sbom := []byte("{}"), []byte(fmt.Sprintf(`{"spdxVersion":"SPDX-2.3","name":"sbom %d"}`, n))
	m := fmt.Sprintf(`{"schemaVersion":2,"mediaType":%q,"artifactType":"application/spdx+json","config":{"mediaType":%q,"digest":%q,"size":2},"layers":[{"mediaType":"application/spdx+json","digest":%q,"size":%d}],"subject":{"mediaType":%q,"digest":%q,"size":%d}}`,
		ocispec.MediaTypeImageManifest, ocispec.MediaTypeEmptyJSON, digest.FromBytes(cfg), digest.FromBytes(sbom), len(sbom), subject.MediaType, subject.Digest, subject.Size)
	return pushManifestTo(t, repo, []byte(m), cfg, sbom)
}

// pushedPlugin pushes the example plugin to ref and returns its manifest.
func pushedPlugin(t *testing.T, ref string) ocispec.Descriptor {
	t.Helper()
	var pushed struct {
		Digest string
		Size   int64
	}
	clitest.DecodeOne(t, mustRun(t, "push", clitest.ExamplePlugin(), ref, "--plain-http", "--json"), &pushed)
	return ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.Digest(pushed.Digest), Size: pushed.Size}
}

// A registry whose referrers listing gives a signature another
// artifactType than the bundle's (go-containerregistry's gives the config
// media type, others none): verify reads such referrers and finds the
// signature, through the referrers API and the tag schema alike; an SBOM
// listed so is read and skipped.
func TestVerifyFindsSignatureListedAsAnotherType(t *testing.T) {
	clitest.OCIEnv(t)
	dir := t.TempDir()
	priv, pub := newKeyPair(t, dir, "acme")
	reg := testservice.StartRegistry(t)
	ref := "oci://" + reg.Host + "/plugins/release-notes:1.2.0"
	subject := pushedPlugin(t, ref)
	var signed signedResult
	clitest.DecodeOne(t, mustRun(t, "sign", ref, "--key", priv, "--plain-http", "--json"), &signed)
	repo, err := oci.NewRepository(reg.Host+"/plugins/release-notes", oci.RemoteOptions{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	pushSBOM(t, repo, subject, 0)

	for _, c := range []struct {
		name  string
		proxy func(testing.TB, string, func(ocispec.Descriptor) ocispec.Descriptor) *testservice.ReferrersProxy
		as    string
	}{
		{"referrers API, config media type", testservice.StartReferrersProxy, ocispec.MediaTypeEmptyJSON},
		{"referrers API, no artifactType", testservice.StartReferrersProxy, ""},
		{"tag schema, config media type", testservice.StartTagSchemaProxy, ocispec.MediaTypeEmptyJSON},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := c.proxy(t, reg.Host, listedAs(c.as))
			d := verifyJSON(t, 0, "oci://"+p.Host+"/plugins/release-notes:1.2.0", "--key", pub, "--plain-http")
			if len(d.Signatures) != 1 || !d.Signatures[0].Valid || string(d.Signatures[0].Referrer) != signed.Referrer.Digest || d.Skipped != 1 {
				t.Fatalf("%+v", d)
			}
			// Each referrer was read once: the signature's manifest is not
			// fetched again to be checked.
			if n := p.ReferrerGets(); n != 2 {
				t.Errorf("%d referrer manifests fetched, want 2", n)
			}
			if p.Listings() == 0 {
				t.Error("the referrers were not listed through the proxy's rewrite")
			}
		})
	}
}

// A tampered signature listed with another artifactType is read and
// refused, with its reason, not skipped.
func TestVerifyRefusesTamperedSignatureListedAsAnotherType(t *testing.T) {
	clitest.OCIEnv(t)
	ctx := context.Background()
	dir := t.TempDir()
	priv, pub := newKeyPair(t, dir, "acme")
	reg := testservice.StartRegistry(t)
	signedRef := "oci://" + reg.Host + "/plugins/signed:1.2.0"
	subject := pushedPlugin(t, signedRef)
	var signed signedResult
	clitest.DecodeOne(t, mustRun(t, "sign", signedRef, "--key", priv, "--plain-http", "--json"), &signed)

	// The signature's bundle with another payload under the same
	// signature, attached to the same plugin in another repository.
	tamperedRef := "oci://" + reg.Host + "/plugins/tampered:1.2.0"
	if d := pushedPlugin(t, tamperedRef); d.Digest != subject.Digest {
		t.Fatalf("the plugin pushed again is %s, not %s", d.Digest, subject.Digest)
	}
	from, err := oci.NewRepository(reg.Host+"/plugins/signed", oci.RemoteOptions{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	to, err := oci.NewRepository(reg.Host+"/plugins/tampered", oci.RemoteOptions{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	mb, err := content.FetchAll(ctx, from, ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.Digest(signed.Referrer.Digest), Size: signed.Referrer.Size})
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := content.FetchAll(ctx, from, ocispec.Descriptor{MediaType: "application/octet-stream", Digest: digest.Digest(signed.Bundle.Digest), Size: signed.Bundle.Size})
	if err != nil {
		t.Fatal(err)
	}
	tampered := bytes.Replace(bundle, []byte(`"payload":"`), []byte(`"payload":"e30K`), 1)
	var m map[string]any
	if err := json.Unmarshal(mb, &m); err != nil || bytes.Equal(tampered, bundle) {
		t.Fatalf("%v: the bundle has no payload to tamper with", err)
	}
	layer := m["layers"].([]any)[0].(map[string]any)
	layer["digest"], layer["size"] = digest.FromBytes(tampered), len(tampered)
	mb, err = json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	bad := pushManifestTo(t, to, mb, []byte("{}"), tampered)

	p := testservice.StartReferrersProxy(t, reg.Host, listedAs(ocispec.MediaTypeEmptyJSON))
	d := verifyJSON(t, 1, "oci://"+p.Host+"/plugins/tampered:1.2.0", "--key", pub, "--plain-http")
	if d.Error.Code != command.CodeNotVerified || len(d.Signatures) != 1 || d.Signatures[0].Referrer != bad.Digest || d.Signatures[0].Valid || d.Signatures[0].Reason == "" {
		t.Fatalf("%+v", d)
	}
}

// Of many referrers listed with an unknown artifactType, verify reads
// --max-unknown-referrers and reports the others unread, in the document
// and the refusal.
func TestVerifyBoundsUnknownReferrers(t *testing.T) {
	clitest.OCIEnv(t)
	dir := t.TempDir()
	priv, pub := newKeyPair(t, dir, "acme")
	reg := testservice.StartRegistry(t)
	ref := "oci://" + reg.Host + "/plugins/crowded:1.2.0"
	subject := pushedPlugin(t, ref)
	repo, err := oci.NewRepository(reg.Host+"/plugins/crowded", oci.RemoteOptions{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	// The SBOMs come first in the listing, the signature last.
	for i := range 5 {
		pushSBOM(t, repo, subject, i)
	}
	mustRun(t, "sign", ref, "--key", priv, "--plain-http")

	p := testservice.StartReferrersProxy(t, reg.Host, listedAs(ocispec.MediaTypeEmptyJSON))
	viaProxy := "oci://" + p.Host + "/plugins/crowded:1.2.0"
	d := verifyJSON(t, 1, viaProxy, "--key", pub, "--plain-http", "--max-unknown-referrers", "3")
	if d.Unread != 3 || d.Skipped != 3 || len(d.Signatures) != 0 || !strings.Contains(d.Error.Message, "3 referrers of unknown type not read: over MaxUnknownReferrers") {
		t.Fatalf("%+v", d)
	}
	if n := p.ReferrerGets(); n != 3 {
		t.Errorf("%d referrer manifests fetched, want 3", n)
	}
	code, stdout, _ := runCLI(t, "verify", viaProxy, "--key", pub, "--plain-http", "--max-unknown-referrers", "3")
	if code != 1 || !strings.Contains(stdout, "3 referrers of unknown type not read: over --max-unknown-referrers") {
		t.Errorf("text: exit %d\n%s", code, stdout)
	}
	// The default reads them all.
	if d = verifyJSON(t, 0, viaProxy, "--key", pub, "--plain-http"); d.Unread != 0 || d.Skipped != 5 || len(d.Signatures) != 1 {
		t.Fatalf("default: %+v", d)
	}
	if code, _, stderr := runCLI(t, "verify", viaProxy, "--key", pub, "--plain-http", "--max-unknown-referrers", "0"); code != 2 || !strings.Contains(stderr, "--max-unknown-referrers") {
		t.Errorf("--max-unknown-referrers 0: exit %d, %s", code, stderr)
	}
}
