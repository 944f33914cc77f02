package trust

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
)

// signedBundle is a signature of subject by key, as Sign makes it.
func signedBundle(t *testing.T, key *PrivateKey, subject ocispec.Descriptor) []byte {
	t.Helper()
	stmt, err := newStatement(subject.Digest, SignPredicateType, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundleDSSE(context.Background(), key, stmt)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVerifyFindsSignatureListedAsAnotherType: a signature listed with no
// artifactType, with its config's media type (go-containerregistry's
// registry) or with a type plugkit does not know is read, found and
// verified; a tampered one listed so is refused, not skipped.
func TestVerifyFindsSignatureListedAsAnotherType(t *testing.T) {
	for _, listed := range []string{"", ocispec.MediaTypeEmptyJSON, "application/vnd.example.unknown"} {
		t.Run(cmp.Or(listed, "none"), func(t *testing.T) {
			store, _ := goldenLayout(t)
			subject := resolveRef(t, store, "1.2.0")
			key := newKey(t, "p256")
			d := attachListed(t, store, subject, signedBundle(t, key, subject), listed)
			rep, err := verifyWith(t, store, subject, &Verifier{Keys: []*PublicKey{key.Public}})
			if err != nil || len(rep.Valid()) != 1 || rep.Valid()[0].Referrer != d.Digest || rep.Skipped != 0 {
				t.Fatalf("%v %+v", err, rep)
			}

			store, _ = goldenLayout(t)
			b := signedBundle(t, key, subject)
			// Another payload under the same signature.
			tampered := bytes.Replace(b, []byte(`"payload":"`), []byte(`"payload":"e30K`), 1)
			if bytes.Equal(tampered, b) {
				t.Fatal("bundle has no payload to tamper with")
			}
			d = attachListed(t, store, subject, tampered, listed)
			rep, err = verifyWith(t, store, subject, &Verifier{Keys: []*PublicKey{key.Public}})
			if !errors.Is(err, ErrNotVerified) || len(rep.Signatures) != 2 || rep.Skipped != 0 {
				t.Fatalf("tampered: %v %+v", err, rep)
			}
			for _, s := range rep.Signatures {
				if s.Referrer == d.Digest && (s.Valid || s.Reason == "") {
					t.Errorf("tampered: %+v", s)
				}
			}
		})
	}
}

// TestVerifyJudgesUnknownReferrerByManifest: a referrer listed with no
// artifactType is a bundle by its manifest's artifactType, else its
// config's media type, else (an empty config) its layers' media types.
func TestVerifyJudgesUnknownReferrerByManifest(t *testing.T) {
	empty := emptyConfigDescriptor()
	for _, c := range []struct {
		name, artifactType, config, layer string
		bundle                            bool
	}{
		{"artifactType", BundleMediaType, empty.MediaType, BundleMediaType, true},
		{"layer under an empty config", "", empty.MediaType, BundleMediaType, true},
		{"config", "", BundleMediaType, BundleMediaType, true},
		{"another artifactType", "application/spdx+json", empty.MediaType, BundleMediaType, false},
		{"another config", "", "application/vnd.example.config.v1+json", BundleMediaType, false},
		{"another layer", "", empty.MediaType, "application/spdx+json", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			store, _ := goldenLayout(t)
			subject := resolveRef(t, store, "1.2.0")
			key := newKey(t, "p256")
			b := signedBundle(t, key, subject)
			layer := ocispec.Descriptor{MediaType: BundleMediaType, Digest: digest.FromBytes(b), Size: int64(len(b))}
			for _, blob := range [][]byte{b, emptyConfig} {
				if err := store.Push(ctx, ocispec.Descriptor{MediaType: "application/octet-stream", Digest: digest.FromBytes(blob), Size: int64(len(blob))}, bytes.NewReader(blob)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
					t.Fatal(err)
				}
			}
			at := ""
			if c.artifactType != "" {
				at = fmt.Sprintf(`"artifactType":%q,`, c.artifactType)
			}
			m := fmt.Sprintf(`{"schemaVersion":2,"mediaType":%q,%s"config":{"mediaType":%q,"digest":%q,"size":2},"layers":[{"mediaType":%q,"digest":%q,"size":%d}],"subject":{"mediaType":%q,"digest":%q,"size":%d}}`,
				ocispec.MediaTypeImageManifest, at, c.config, empty.Digest, c.layer, layer.Digest, layer.Size, subject.MediaType, subject.Digest, subject.Size)
			pushManifest(t, store, []byte(m), "")
			rep, err := verifyWith(t, store, subject, &Verifier{Keys: []*PublicKey{key.Public}})
			switch {
			case c.bundle && (err != nil || len(rep.Valid()) != 1):
				t.Fatalf("a bundle: %v %+v", err, rep)
			case !c.bundle && (!errors.Is(err, ErrNotVerified) || rep.Skipped != 1 || len(rep.Signatures) != 1):
				t.Fatalf("not a bundle: %v %+v", err, rep)
			}
		})
	}
}

// fetchCounter is a store that counts the manifests fetched from it.
type fetchCounter struct {
	content.ReadOnlyGraphStorage
	manifests atomic.Int64
}

func (f *fetchCounter) Fetch(ctx context.Context, d ocispec.Descriptor) (io.ReadCloser, error) {
	if d.MediaType == ocispec.MediaTypeImageManifest {
		f.manifests.Add(1)
	}
	return f.ReadOnlyGraphStorage.Fetch(ctx, d)
}

// TestVerifyBoundsUnknownReferrers: of many referrers listed with no
// artifactType, only MaxUnknownReferrers are read; the others are
// reported as unread, in the report and in the refusal.
func TestVerifyBoundsUnknownReferrers(t *testing.T) {
	ctx := context.Background()
	store, _ := goldenLayout(t)
	subject := resolveRef(t, store, "1.2.0")
	cfg := emptyConfigDescriptor()
	if err := store.Push(ctx, cfg, bytes.NewReader(emptyConfig)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		t.Fatal(err)
	}
	const junk = 30
	for i := range junk {
		sbom := fmt.Sprintf(`{"schemaVersion":2,"mediaType":%q,"artifactType":"application/spdx+json","config":{"mediaType":%q,"digest":%q,"size":2},"layers":[],"subject":{"mediaType":%q,"digest":%q,"size":%d},"annotations":{"n":"%d"}}`,
			ocispec.MediaTypeImageManifest, cfg.MediaType, cfg.Digest, subject.MediaType, subject.Digest, subject.Size, i)
		pushManifest(t, store, []byte(sbom), "")
	}
	v := &Verifier{Keys: []*PublicKey{newKey(t, "p256").Public}, Limits: Limits{MaxUnknownReferrers: 10}}
	counter := &fetchCounter{ReadOnlyGraphStorage: store}
	rep, err := v.VerifyOCI(ctx, counter, subject)
	// The layout lists cosign's signature with no artifactType too: 31
	// unknown referrers, 10 read.
	if n := counter.manifests.Load(); n != 10 {
		t.Errorf("%d manifests fetched, want 10", n)
	}
	if !errors.Is(err, ErrNotVerified) || rep.Unread != junk+1-10 || rep.Skipped+len(rep.Signatures) != 10 {
		t.Fatalf("%v %+v", err, rep)
	}
	if !strings.Contains(err.Error(), "21 referrers of unknown type not read: over MaxUnknownReferrers") {
		t.Errorf("refusal %q does not name the limit", err)
	}
	// The default reads them all.
	v.Limits = Limits{}
	if rep, _ = v.VerifyOCI(ctx, store, subject); rep.Unread != 0 || rep.Skipped != junk || len(rep.Signatures) != 1 {
		t.Errorf("default limit: %+v", rep)
	}
}
