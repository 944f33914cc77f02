package trust

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content/oci"
)

const (
	goldenDir = "testdata/cosign"
	// goldenPlugin is the identity of the plugin in signed-plugin.tar.
	goldenPlugin = "sha256:a81d6d7d5c9bda9cdce2f95911cca9442fda4c320501719949742448cb05d8b4"
	// goldenReferrer is cosign's signature referrer manifest in it.
	goldenReferrer = "sha256:aa3c08383987f74c193866f846b55b7dd0df58d12a6d11fb435a0d79fe1789f3"
	goldenBundle   = "sha256:7a1c2945c312df27beaf3fff32b3ae6f86a35685c5cb2ac8536a56bde76f720f"
	goldenHint     = "W8xUyEdmcv6tkeW8sHE6PevS6nJrktlWegiqLqB1V38="
)

func golden(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goldenDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func goldenPublicKey(t testing.TB, name string) *PublicKey {
	t.Helper()
	k, err := LoadPublicKey(filepath.Join(goldenDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func emptyPassword() ([]byte, error) { return []byte{}, nil }

func goldenPrivateKey(t testing.TB) *PrivateKey {
	t.Helper()
	k, err := LoadPrivateKey(filepath.Join(goldenDir, "cosign.key"), emptyPassword)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// goldenLayout unpacks signed-plugin.tar into a writable OCI layout
// directory and opens it.
func goldenLayout(t testing.TB) (*oci.Store, string) {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Open(filepath.Join(goldenDir, "signed-plugin.tar"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := oci.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

// resolve finds a manifest by tag or digest.
func resolveRef(t testing.TB, store interface {
	Resolve(context.Context, string) (ocispec.Descriptor, error)
}, ref string) ocispec.Descriptor {
	t.Helper()
	d, err := store.Resolve(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// newKey makes a private key of a kind ("p256", "p384", "ed25519") and
// loads it back from PKCS#8 PEM, as a user's key file would be.
func newKey(t testing.TB, kind string) *PrivateKey {
	t.Helper()
	var priv crypto.Signer
	var err error
	switch kind {
	case "p256":
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "p384":
		priv, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "ed25519":
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	default:
		t.Fatalf("unknown key kind %q", kind)
	}
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ParsePrivateKey(kind+".key", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// writeKeyFiles writes a key's PEM halves into dir and returns the
// public key's path.
func writePublicKey(t testing.TB, dir, name string, k *PublicKey) string {
	t.Helper()
	b, err := k.PEM()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// attachForTest stores a bundle made elsewhere (a keyless one, a tampered
// one) as a referrer of subject in a layout, as cosign would.
func attachForTest(t testing.TB, store *oci.Store, subject ocispec.Descriptor, b []byte) ocispec.Descriptor {
	t.Helper()
	return attachListed(t, store, subject, b, BundleMediaType)
}

// attachListed is attachForTest with the referrer listed in the layout's
// index under the artifactType listed, as a registry may list it.
func attachListed(t testing.TB, store *oci.Store, subject ocispec.Descriptor, b []byte, listed string) ocispec.Descriptor {
	t.Helper()
	ctx := context.Background()
	layer := ocispec.Descriptor{MediaType: BundleMediaType, Digest: digest.FromBytes(b), Size: int64(len(b))}
	if err := store.Push(ctx, layer, bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	mb, err := newReferrerManifest(subject, layer, SignPredicateType, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	d := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(mb), Size: int64(len(mb)), ArtifactType: listed}
	if err := store.Push(ctx, d, bytes.NewReader(mb)); err != nil {
		t.Fatal(err)
	}
	return d
}

// pkcs8PEM is a private key's unencrypted PKCS#8 PEM file.
func pkcs8PEM(t testing.TB, k *PrivateKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(k.signer)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}
