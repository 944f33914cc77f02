package trust

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// The seed corpora are under testdata/fuzz/: the golden files and the
// policies of the tests, and what fuzzing found interesting.

// FuzzParsePolicy: any bytes, as JSON or YAML, give a policy or a
// *PolicyError, never a panic; an accepted policy admits nothing it
// should not (no rule, no admission).
func FuzzParsePolicy(f *testing.F) {
	f.Add([]byte(issueExample), false)
	f.Add([]byte(issueExampleYAML), true)
	f.Add([]byte(`{"rules":[{"name":"*","method":"digest","digests":["`+goldenPlugin+`"]}]}`), false)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, doc []byte, yamlDoc bool) {
		p, err := ParsePolicy("fuzz", doc, dir, yamlDoc)
		if err != nil {
			var pe *PolicyError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v is not a PolicyError", err, err)
			}
			return
		}
		if p.Digest != digest.FromBytes(doc) {
			t.Fatal("policy digest is not the file's")
		}
		for _, r := range p.Rules {
			if _, ok := methodFields[r.Method]; !ok {
				t.Fatalf("accepted method %q", r.Method)
			}
		}
		if _, err := p.Standalone(); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzBundleLayer: any referrer manifest bytes give a layer or an error.
func FuzzBundleLayer(f *testing.F) {
	f.Add([]byte("{}"))
	subject := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: goldenPlugin, Size: 748}
	layer := ocispec.Descriptor{MediaType: BundleMediaType, Digest: goldenBundle, Size: 659}
	m, err := newReferrerManifest(subject, layer, SignPredicateType, time.Unix(0, 0))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(m)
	f.Fuzz(func(t *testing.T, manifest []byte) {
		l, _, err := bundleLayer(manifest, goldenPlugin, DefaultMaxBundleBytes)
		if err == nil && (l.Size < 0 || l.Size > DefaultMaxBundleBytes || l.Digest.Validate() != nil || !isBundleType(l.MediaType)) {
			t.Fatalf("accepted layer %+v", l)
		}
	})
}

// FuzzVerifyBlob: any bundle bytes verify the golden blob only if they
// are a real signature by cosign.pub over it; nothing panics.
func FuzzVerifyBlob(f *testing.F) {
	f.Add(golden(f, "blob.sigstore.json"))
	f.Add([]byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`))
	blob := golden(f, "blob.txt")
	v := &Verifier{Keys: []*PublicKey{goldenPublicKey(f, "cosign.pub")}}
	goodBundle, err := parseBundle(golden(f, "blob.sigstore.json"))
	if err != nil {
		f.Fatal(err)
	}
	goodSig := goodBundle.GetMessageSignature().GetSignature()
	f.Fuzz(func(t *testing.T, b []byte) {
		rep, err := v.VerifyBlob(bytes.NewReader(blob), b)
		if err != nil {
			if !errors.Is(err, ErrNotVerified) || rep == nil || rep.Signatures[0].Reason == "" {
				t.Fatalf("refusal without a reason: %v", err)
			}
			return
		}
		// Only cosign's signature, however the JSON around it is
		// spelled, verifies: nothing else can without the private key.
		bu, err := parseBundle(b)
		if err != nil || !bytes.Equal(bu.GetMessageSignature().GetSignature(), goodSig) {
			t.Fatalf("verified a bundle without cosign's signature: %s", b)
		}
	})
}
