package trust

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"
)

func verifyWith(t *testing.T, store content.ReadOnlyGraphStorage, subject ocispec.Descriptor, v *Verifier) (*Report, error) {
	t.Helper()
	return v.VerifyOCI(context.Background(), store, subject)
}

func TestSignVerifyLayout(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []string{"p256", "p384", "ed25519"} {
		t.Run(kind, func(t *testing.T) {
			store, dir := goldenLayout(t)
			subject := resolveRef(t, store, "1.2.0")
			key, other := newKey(t, kind), newKey(t, "p256")
			a, err := Sign(ctx, store, subject, key, nil)
			if err != nil {
				t.Fatal(err)
			}
			if a.Referrer.ArtifactType != BundleMediaType || a.PredicateType != SignPredicateType {
				t.Errorf("attached %+v", a)
			}

			// Read back from disk: the referrer is in index.json.
			reopened, err := oci.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := verifyWith(t, reopened, subject, &Verifier{Keys: []*PublicKey{key.Public}})
			if err != nil {
				t.Fatalf("right key: %v", err)
			}
			if len(rep.Signatures) != 2 || len(rep.Valid()) != 1 || rep.Valid()[0].Referrer != a.Referrer.Digest {
				t.Fatalf("right key: report %+v", rep)
			}
			if s := rep.Valid()[0].Signer; s.Key != key.Public.Name || s.KeyID != key.Public.ID {
				t.Errorf("signer %+v", s)
			}

			rep, err = verifyWith(t, reopened, subject, &Verifier{Keys: []*PublicKey{other.Public}})
			if !errors.Is(err, ErrNotVerified) {
				t.Fatalf("other key: err = %v", err)
			}
			for _, s := range rep.Signatures {
				if s.Valid || !strings.Contains(s.Reason, "does not verify with key") {
					t.Errorf("other key: %+v", s)
				}
			}

			// Both signers trusted: both signatures count.
			rep, err = verifyWith(t, reopened, subject, &Verifier{Keys: []*PublicKey{key.Public, goldenPublicKey(t, "cosign.pub")}})
			if err != nil || len(rep.Valid()) != 2 {
				t.Fatalf("both keys: %v, report %+v", err, rep)
			}
		})
	}
}

// pushManifest stores a manifest in a layout and returns its descriptor.
func pushManifest(t *testing.T, store *oci.Store, b []byte, artifactType string) ocispec.Descriptor {
	t.Helper()
	d := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(b), Size: int64(len(b)), ArtifactType: artifactType}
	if err := store.Push(context.Background(), d, bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	return d
}

func fetchJSON(t *testing.T, store content.Fetcher, d ocispec.Descriptor, v any) []byte {
	t.Helper()
	b, err := content.FetchAll(context.Background(), store, d)
	if err != nil {
		t.Fatal(err)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func TestVerifyRefusesModifiedManifest(t *testing.T) {
	store, _ := goldenLayout(t)
	subject := resolveRef(t, store, "1.2.0")
	var m map[string]any
	fetchJSON(t, store, subject, &m)
	m["annotations"].(map[string]any)["org.opencontainers.image.version"] = "1.2.1"
	b, _ := json.Marshal(m)
	changed := pushManifest(t, store, b, "application/vnd.colossus.agent-plugin.v1")

	_, err := verifyWith(t, store, changed, &Verifier{Keys: []*PublicKey{goldenPublicKey(t, "cosign.pub")}})
	if !errors.Is(err, ErrNotVerified) || !strings.Contains(err.Error(), "no signature") {
		t.Fatalf("err = %v, want no signature found", err)
	}
}

func TestVerifyRefusesModifiedLayer(t *testing.T) {
	store, _ := goldenLayout(t)
	subject := resolveRef(t, store, "1.2.0")
	var m ocispec.Manifest
	fetchJSON(t, store, subject, &m)
	layer := []byte("not the plugin that was signed")
	m.Layers[0].Digest, m.Layers[0].Size = digest.FromBytes(layer), int64(len(layer))
	if err := store.Push(context.Background(), m.Layers[0], bytes.NewReader(layer)); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(m)
	changed := pushManifest(t, store, b, m.ArtifactType)
	if _, err := verifyWith(t, store, changed, &Verifier{Keys: []*PublicKey{goldenPublicKey(t, "cosign.pub")}}); !errors.Is(err, ErrNotVerified) {
		t.Fatalf("err = %v", err)
	}
}

// TestVerifyRefusesSignatureOfAnotherDigest attaches cosign's valid bundle
// (over the golden plugin) to another manifest.
func TestVerifyRefusesSignatureOfAnotherDigest(t *testing.T) {
	store, _ := goldenLayout(t)
	subject := resolveRef(t, store, "1.2.0")
	var m map[string]any
	fetchJSON(t, store, subject, &m)
	m["annotations"].(map[string]any)["org.opencontainers.image.title"] = "impostor"
	b, _ := json.Marshal(m)
	impostor := pushManifest(t, store, b, "application/vnd.colossus.agent-plugin.v1")

	var ref ocispec.Manifest
	fetchJSON(t, store, resolveRef(t, store, goldenReferrer), &ref)
	moved, err := newReferrerManifest(impostor, ref.Layers[0], SignPredicateType, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pushManifest(t, store, moved, BundleMediaType)

	rep, err := verifyWith(t, store, impostor, &Verifier{Keys: []*PublicKey{goldenPublicKey(t, "cosign.pub")}})
	if !errors.Is(err, ErrNotVerified) {
		t.Fatalf("err = %v", err)
	}
	if len(rep.Signatures) != 1 || !strings.Contains(rep.Signatures[0].Reason, "does not match") {
		t.Fatalf("report %+v", rep)
	}
}

func TestVerifyRefusesModifiedBundle(t *testing.T) {
	t.Run("bytes changed in the layout", func(t *testing.T) {
		store, dir := goldenLayout(t)
		subject := resolveRef(t, store, "1.2.0")
		p := filepath.Join(dir, "blobs", "sha256", digest.Digest(goldenBundle).Encoded())
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, bytes.Replace(b, []byte("hint"), []byte("hinT"), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := verifyWith(t, store, subject, &Verifier{Keys: []*PublicKey{goldenPublicKey(t, "cosign.pub")}})
		if !errors.Is(err, ErrNotVerified) || !strings.Contains(rep.Signatures[0].Reason, "fetching the bundle") {
			t.Fatalf("err = %v, report %+v", err, rep)
		}
	})
	t.Run("payload changed and re-attached", func(t *testing.T) {
		store, _ := goldenLayout(t)
		subject := resolveRef(t, store, "1.2.0")
		var ref ocispec.Manifest
		fetchJSON(t, store, resolveRef(t, store, goldenReferrer), &ref)
		var bundle map[string]any
		fetchJSON(t, store, ref.Layers[0], &bundle)
		env := bundle["dsseEnvelope"].(map[string]any)
		payload, _ := base64.StdEncoding.DecodeString(env["payload"].(string))
		payload = bytes.Replace(payload, []byte(`"predicate":{}`), []byte(`"predicate":{"x":1}`), 1)
		env["payload"] = base64.StdEncoding.EncodeToString(payload)
		nb, _ := json.Marshal(bundle)
		layer := ocispec.Descriptor{MediaType: BundleMediaType, Digest: digest.FromBytes(nb), Size: int64(len(nb))}
		if err := store.Push(context.Background(), layer, bytes.NewReader(nb)); err != nil {
			t.Fatal(err)
		}
		mb, _ := newReferrerManifest(subject, layer, SignPredicateType, time.Now())
		pushManifest(t, store, mb, BundleMediaType)

		rep, err := verifyWith(t, store, subject, &Verifier{Keys: []*PublicKey{goldenPublicKey(t, "cosign.pub")}})
		if err != nil {
			t.Fatal(err) // cosign's own signature is still there and valid
		}
		if len(rep.Signatures) != 2 || len(rep.Valid()) != 1 || rep.Valid()[0].Referrer != goldenReferrer {
			t.Fatalf("report %+v", rep)
		}
	})
}

func TestSignConcurrentlyKeepsEverySignature(t *testing.T) {
	ctx := context.Background()
	store, dir := goldenLayout(t)
	subject := resolveRef(t, store, "1.2.0")
	const n = 8
	keys := make([]*PrivateKey, n)
	for i := range keys {
		keys[i] = newKey(t, "p256")
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = Sign(ctx, store, subject, keys[i], nil)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	reopened, err := oci.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if _, err := verifyWith(t, reopened, subject, &Verifier{Keys: []*PublicKey{k.Public}}); err != nil {
			t.Errorf("signature %d lost: %v", i, err)
		}
	}
}

func TestAttestation(t *testing.T) {
	ctx := context.Background()
	store, _ := goldenLayout(t)
	subject := resolveRef(t, store, "1.2.0")
	key := newKey(t, "p256")
	slsa := "https://slsa.dev/provenance/v1"
	predicate := []byte(`{"buildDefinition": {"buildType": "https://example.com/build/v1"}, "runDetails": {}}`)
	a, err := Sign(ctx, store, subject, key, &SignOptions{PredicateType: slsa, Predicate: predicate})
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	fetchJSON(t, store, a.Referrer, &m)
	if m.Annotations[AnnotationPredicateType] != slsa {
		t.Errorf("annotation %q", m.Annotations[AnnotationPredicateType])
	}

	rep, err := verifyWith(t, store, subject, &Verifier{Keys: []*PublicKey{key.Public}, PredicateType: slsa})
	if err != nil || len(rep.Valid()) != 1 {
		t.Fatalf("attestation: %v %+v", err, rep)
	}
	// An attestation is not a signature, and a signature is not an
	// attestation.
	rep, err = verifyWith(t, store, subject, &Verifier{Keys: []*PublicKey{key.Public}})
	if !errors.Is(err, ErrNotVerified) || rep.Skipped != 1 {
		t.Fatalf("signature asked, attestation present: %v %+v", err, rep)
	}
	if _, err := verifyWith(t, store, subject, &Verifier{Keys: []*PublicKey{goldenPublicKey(t, "cosign.pub")}, PredicateType: slsa}); !errors.Is(err, ErrNotVerified) {
		t.Fatalf("attestation asked, cosign signature present: %v", err)
	}

	for _, bad := range []string{`[1]`, `"x"`, `{`, ``} {
		if _, err := Sign(ctx, store, subject, key, &SignOptions{PredicateType: slsa, Predicate: []byte(bad)}); err == nil {
			t.Errorf("predicate %q accepted", bad)
		}
	}
	if _, err := Sign(ctx, store, subject, key, &SignOptions{Predicate: predicate}); err == nil {
		t.Error("a predicate without a type was accepted")
	}
}

// TestAttestationTypeFromStatement re-labels an attestation's annotation as
// a signature: the signed statement decides, not the annotation.
func TestAttestationTypeFromStatement(t *testing.T) {
	ctx := context.Background()
	store, _ := goldenLayout(t)
	subject := resolveRef(t, store, "1.2.0")
	key := newKey(t, "p256")
	stmt, _ := newStatement(subject.Digest, "https://example.com/other/v1", nil)
	b, err := bundleDSSE(ctx, key, stmt)
	if err != nil {
		t.Fatal(err)
	}
	layer := ocispec.Descriptor{MediaType: BundleMediaType, Digest: digest.FromBytes(b), Size: int64(len(b))}
	if err := store.Push(ctx, layer, bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	mb, _ := newReferrerManifest(subject, layer, SignPredicateType, time.Now()) // the lie
	pushManifest(t, store, mb, BundleMediaType)
	rep, err := verifyWith(t, store, subject, &Verifier{Keys: []*PublicKey{key.Public}})
	if !errors.Is(err, ErrNotVerified) {
		t.Fatalf("err = %v", err)
	}
	found := false
	for _, s := range rep.Signatures {
		found = found || strings.Contains(s.Reason, "predicate type is \"https://example.com/other/v1\"")
	}
	if !found {
		t.Errorf("report %+v", rep)
	}
}

func TestVerifyLimits(t *testing.T) {
	ctx := context.Background()
	store, _ := goldenLayout(t)
	subject := resolveRef(t, store, "1.2.0")
	key := newKey(t, "p256")
	for range 3 {
		if _, err := Sign(ctx, store, subject, key, nil); err != nil {
			t.Fatal(err)
		}
	}
	// 4 signatures (cosign's and 3); only 2 are checked. Which 2 depends
	// on the listing order, so trust both signers.
	v := &Verifier{Keys: []*PublicKey{key.Public, goldenPublicKey(t, "cosign.pub")}, Limits: Limits{MaxSignatures: 2}}
	rep, err := v.VerifyOCI(ctx, store, subject)
	if err != nil || len(rep.Signatures) != 2 || rep.Unchecked != 2 {
		t.Fatalf("MaxSignatures: %v %+v", err, rep)
	}
	v = &Verifier{Keys: []*PublicKey{key.Public}, Limits: Limits{MaxBundleBytes: 100}}
	rep, err = v.VerifyOCI(ctx, store, subject)
	if !errors.Is(err, ErrNotVerified) || !strings.Contains(rep.Signatures[0].Reason, "MaxBundleBytes") {
		t.Fatalf("MaxBundleBytes: %v %+v", err, rep)
	}
	v = &Verifier{Keys: []*PublicKey{key.Public}, Limits: Limits{MaxManifestBytes: 100}}
	rep, err = v.VerifyOCI(ctx, store, subject)
	if !errors.Is(err, ErrNotVerified) || !strings.Contains(rep.Signatures[0].Reason, "MaxManifestBytes") {
		t.Fatalf("MaxManifestBytes: %v %+v", err, rep)
	}
}

// TestVerifySkipsOtherReferrers: an SBOM artifact and a non-manifest
// referrer are not signature candidates.
func TestVerifySkipsOtherReferrers(t *testing.T) {
	ctx := context.Background()
	store, _ := goldenLayout(t)
	subject := resolveRef(t, store, "1.2.0")
	cfg := emptyConfigDescriptor()
	sbom := fmt.Sprintf(`{"schemaVersion":2,"mediaType":%q,"artifactType":"application/spdx+json","config":{"mediaType":%q,"digest":%q,"size":2},"layers":[],"subject":{"mediaType":%q,"digest":%q,"size":%d}}`,
		ocispec.MediaTypeImageManifest, cfg.MediaType, cfg.Digest, subject.MediaType, subject.Digest, subject.Size)
	if err := store.Push(ctx, cfg, bytes.NewReader(emptyConfig)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		t.Fatal(err)
	}
	pushManifest(t, store, []byte(sbom), "application/spdx+json")
	rep, err := verifyWith(t, store, subject, &Verifier{Keys: []*PublicKey{goldenPublicKey(t, "cosign.pub")}})
	if err != nil || len(rep.Signatures) != 1 || rep.Skipped != 1 {
		t.Fatalf("%v %+v", err, rep)
	}
}

func TestSignRefusesNonManifest(t *testing.T) {
	store, _ := goldenLayout(t)
	layer := ocispec.Descriptor{MediaType: "application/vnd.colossus.agent-plugin.content.v1.tar+gzip", Digest: goldenBundle, Size: 1}
	if _, err := Sign(context.Background(), store, layer, newKey(t, "p256"), nil); err == nil {
		t.Fatal("signed a layer")
	}
}
