package trust

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"
)

// The golden files were made by cosign v3.1.3 (testdata/cosign/README.md).

func TestGoldenKeyDecryptsWithEmptyPassword(t *testing.T) {
	k := goldenPrivateKey(t)
	if k.Public.ID != goldenHint {
		t.Errorf("hint %s, want cosign's %s", k.Public.ID, goldenHint)
	}
	pub := goldenPublicKey(t, "cosign.pub")
	if !pub.Key.(*ecdsa.PublicKey).Equal(k.Public.Key) {
		t.Error("cosign.key does not decrypt to the key of cosign.pub")
	}
}

func TestGoldenKeyWrongPassword(t *testing.T) {
	_, err := LoadPrivateKey(filepath.Join(goldenDir, "cosign.key"), func() ([]byte, error) { return []byte("nope"), nil })
	if !errors.Is(err, ErrPassword) {
		t.Fatalf("err = %v, want ErrPassword", err)
	}
	_, err = LoadPrivateKey(filepath.Join(goldenDir, "cosign.key"), nil)
	if err == nil || !strings.Contains(err.Error(), "encrypted") {
		t.Fatalf("no password: err = %v", err)
	}
}

func TestGoldenSignedPluginVerifies(t *testing.T) {
	ctx := context.Background()
	store, err := oci.NewFromTar(ctx, filepath.Join(goldenDir, "signed-plugin.tar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"1.2.0", goldenPlugin} {
		subject := resolveRef(t, store, ref)
		if subject.Digest != goldenPlugin {
			t.Fatalf("%s resolves to %s", ref, subject.Digest)
		}
		v := &Verifier{Keys: []*PublicKey{goldenPublicKey(t, "cosign.pub")}}
		rep, err := v.VerifyOCI(ctx, store, subject)
		if err != nil {
			t.Fatalf("cosign.pub: %v", err)
		}
		valid := rep.Valid()
		if len(valid) != 1 || valid[0].Referrer != goldenReferrer || valid[0].Signer.KeyID != goldenHint {
			t.Fatalf("cosign.pub: report %+v", rep)
		}

		v = &Verifier{Keys: []*PublicKey{goldenPublicKey(t, "other.pub")}}
		rep, err = v.VerifyOCI(ctx, store, subject)
		var nv *NotVerifiedError
		if !errors.As(err, &nv) || !errors.Is(err, ErrNotVerified) {
			t.Fatalf("other.pub: err = %v, want a NotVerifiedError", err)
		}
		if len(rep.Signatures) != 1 || rep.Signatures[0].Valid || !strings.Contains(rep.Signatures[0].Reason, "other.pub") {
			t.Fatalf("other.pub: report %+v", rep)
		}
	}
}

func TestGoldenBlobVerifies(t *testing.T) {
	blob, bundleJSON := golden(t, "blob.txt"), golden(t, "blob.sigstore.json")
	good := &Verifier{Keys: []*PublicKey{goldenPublicKey(t, "cosign.pub")}}
	rep, err := good.VerifyBlob(bytes.NewReader(blob), bundleJSON)
	if err != nil {
		t.Fatalf("cosign.pub: %v", err)
	}
	if rep.Subject != digest.FromBytes(blob) || rep.Signatures[0].Signer.Key == "" {
		t.Errorf("report %+v", rep)
	}
	other := &Verifier{Keys: []*PublicKey{goldenPublicKey(t, "other.pub")}}
	if _, err := other.VerifyBlob(bytes.NewReader(blob), bundleJSON); !errors.Is(err, ErrNotVerified) {
		t.Errorf("other.pub: err = %v", err)
	}
	if _, err := good.VerifyBlob(bytes.NewReader(append(blob, '!')), bundleJSON); !errors.Is(err, ErrNotVerified) {
		t.Errorf("other bytes: err = %v", err)
	}
}

// TestSignatureShapeMatchesCosign builds plugkit's statement, bundle and
// referrer manifest for the golden plugin with cosign's inputs and compares
// them with what cosign wrote, byte for byte except the (randomised)
// ECDSA signature.
func TestSignatureShapeMatchesCosign(t *testing.T) {
	ctx := context.Background()
	store, err := oci.NewFromTar(ctx, filepath.Join(goldenDir, "signed-plugin.tar"))
	if err != nil {
		t.Fatal(err)
	}
	fetch := func(d ocispec.Descriptor) []byte {
		b, err := content.FetchAll(ctx, store, d)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	subject := resolveRef(t, store, "1.2.0")
	refManifest := fetch(resolveRef(t, store, goldenReferrer))
	var m ocispec.Manifest
	if err := json.Unmarshal(refManifest, &m); err != nil {
		t.Fatal(err)
	}
	cosignBundle := fetch(m.Layers[0])

	// The statement: the same bytes.
	var gb struct {
		DSSE struct {
			Payload    string `json:"payload"`
			Signatures []struct {
				Sig string `json:"sig"`
			} `json:"signatures"`
		} `json:"dsseEnvelope"`
	}
	if err := json.Unmarshal(cosignBundle, &gb); err != nil {
		t.Fatal(err)
	}
	cosignStatement, _ := base64.StdEncoding.DecodeString(gb.DSSE.Payload)
	stmt, err := newStatement(subject.Digest, SignPredicateType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stmt, cosignStatement) {
		t.Errorf("statement\n got %s\nwant %s", stmt, cosignStatement)
	}

	// The bundle: the same bytes once the signature is set aside.
	b, err := bundleDSSE(ctx, goldenPrivateKey(t), stmt)
	if err != nil {
		t.Fatal(err)
	}
	var ours struct {
		DSSE struct {
			Signatures []struct {
				Sig string `json:"sig"`
			} `json:"signatures"`
		} `json:"dsseEnvelope"`
	}
	if err := json.Unmarshal(b, &ours); err != nil {
		t.Fatal(err)
	}
	withCosignSig := bytes.Replace(b, []byte(ours.DSSE.Signatures[0].Sig), []byte(gb.DSSE.Signatures[0].Sig), 1)
	if !bytes.Equal(withCosignSig, cosignBundle) {
		t.Errorf("bundle\n got %s\nwant %s", withCosignSig, cosignBundle)
	}

	// The referrer manifest: the same bytes for the same bundle and time.
	created, err := time.Parse(time.RFC3339, m.Annotations[ocispec.AnnotationCreated])
	if err != nil {
		t.Fatal(err)
	}
	ourManifest, err := newReferrerManifest(subject, m.Layers[0], SignPredicateType, created)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ourManifest, refManifest) {
		t.Errorf("referrer manifest\n got %s\nwant %s", ourManifest, refManifest)
	}
	// Field by field, for a reader of a failure above.
	var ourM ocispec.Manifest
	if err := json.Unmarshal(ourManifest, &ourM); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, got, want string }{
		{"mediaType", ourM.MediaType, m.MediaType},
		{"artifactType", ourM.ArtifactType, m.ArtifactType},
		{"config.mediaType", ourM.Config.MediaType, m.Config.MediaType},
		{"config.artifactType", ourM.Config.ArtifactType, m.Config.ArtifactType},
		{"config.digest", string(ourM.Config.Digest), string(m.Config.Digest)},
		{"layers[0].mediaType", ourM.Layers[0].MediaType, m.Layers[0].MediaType},
		{"subject.digest", string(ourM.Subject.Digest), string(m.Subject.Digest)},
		{"subject.mediaType", ourM.Subject.MediaType, m.Subject.MediaType},
		{"annotations." + AnnotationBundleContent, ourM.Annotations[AnnotationBundleContent], m.Annotations[AnnotationBundleContent]},
		{"annotations." + AnnotationPredicateType, ourM.Annotations[AnnotationPredicateType], m.Annotations[AnnotationPredicateType]},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, cosign wrote %q", c.name, c.got, c.want)
		}
	}
	if len(ourM.Annotations) != len(m.Annotations) {
		t.Errorf("annotations %v, cosign wrote %v", ourM.Annotations, m.Annotations)
	}
}

// TestBlobBundleShapeMatchesCosign compares plugkit's sign-blob bundle with
// cosign's, the signature set aside.
func TestBlobBundleShapeMatchesCosign(t *testing.T) {
	blob, cosignBundle := golden(t, "blob.txt"), golden(t, "blob.sigstore.json")
	b, err := SignBlob(context.Background(), blob, goldenPrivateKey(t))
	if err != nil {
		t.Fatal(err)
	}
	sig := func(b []byte) string {
		var x struct {
			M struct {
				Signature string `json:"signature"`
			} `json:"messageSignature"`
		}
		if err := json.Unmarshal(b, &x); err != nil {
			t.Fatal(err)
		}
		return x.M.Signature
	}
	got := bytes.Replace(b, []byte(sig(b)), []byte(sig(cosignBundle)), 1)
	if !bytes.Equal(got, cosignBundle) {
		t.Errorf("bundle\n got %s\nwant %s", got, cosignBundle)
	}
	v := &Verifier{Keys: []*PublicKey{goldenPublicKey(t, "cosign.pub")}}
	if _, err := v.VerifyBlob(bytes.NewReader(blob), b); err != nil {
		t.Errorf("plugkit's own blob bundle: %v", err)
	}
}
