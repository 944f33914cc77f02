package trust

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
)

func TestGenerateKeyPair(t *testing.T) {
	for _, pw := range []string{"", "correct horse"} {
		priv, pub, err := GenerateKeyPair([]byte(pw))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(priv, []byte("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----")) {
			t.Errorf("password %q: private key is not cosign's encrypted format:\n%s", pw, priv)
		}
		k, err := ParsePrivateKey("cosign.key", priv, func() ([]byte, error) { return []byte(pw), nil })
		if err != nil {
			t.Fatalf("password %q: %v", pw, err)
		}
		p, err := ParsePublicKey("cosign.pub", pub)
		if err != nil {
			t.Fatal(err)
		}
		if p.ID != k.Public.ID {
			t.Errorf("password %q: the public key does not match the private key", pw)
		}
		if _, ok := p.Key.(*ecdsa.PublicKey); !ok {
			t.Errorf("generated %T, want ECDSA P-256 as cosign", p.Key)
		}
		_, err = ParsePrivateKey("cosign.key", priv, func() ([]byte, error) { return []byte(pw + "x"), nil })
		if !errors.Is(err, ErrPassword) {
			t.Errorf("password %q: wrong password gave %v", pw, err)
		}
	}
}

func TestParseKeyErrors(t *testing.T) {
	p224, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p224DER, _ := x509.MarshalPKCS8PrivateKey(p224)
	p224Pub, _ := x509.MarshalPKIXPublicKey(p224.Public())
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	sec1, _ := x509.MarshalECPrivateKey(p256)
	enc := func(typ string, b []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}) }

	for _, c := range []struct {
		name, msg string
		pem       []byte
	}{
		{"not PEM", "not a PEM private key", []byte("hello")},
		{"P-224", "unsupported ECDSA curve P-224", enc("PRIVATE KEY", p224DER)},
		{"SEC1", `unsupported PEM block "EC PRIVATE KEY"`, enc("EC PRIVATE KEY", sec1)},
		{"a public key", `unsupported PEM block "PUBLIC KEY"`, golden(t, "cosign.pub")},
		{"garbage PKCS#8", "", enc("PRIVATE KEY", []byte("garbage"))},
	} {
		_, err := ParsePrivateKey("k", c.pem, emptyPassword)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want %q", c.name, err, c.msg)
		}
	}
	for _, c := range []struct {
		name, msg string
		pem       []byte
	}{
		{"not PEM", "not a PEM public key", []byte("hello")},
		{"P-224", "unsupported ECDSA curve P-224", enc("PUBLIC KEY", p224Pub)},
		{"a private key", "not a PEM public key", golden(t, "cosign.key")},
	} {
		_, err := ParsePublicKey("k", c.pem)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("public %s: %v, want %q", c.name, err, c.msg)
		}
	}
	big := filepath.Join(t.TempDir(), "big.pub")
	if err := os.WriteFile(big, bytes.Repeat([]byte("x"), MaxKeyFileBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPublicKey(big); err == nil || !strings.Contains(err.Error(), "MaxKeyFileBytes") {
		t.Errorf("oversized key file: %v", err)
	}
	if _, err := LoadPublicKey(filepath.Join(t.TempDir(), "absent.pub")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent key file: %v", err)
	}
	// A password function that fails stops the load with its error.
	boom := errors.New("no terminal")
	if _, err := LoadPrivateKey(filepath.Join(goldenDir, "cosign.key"), func() ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("password error: %v", err)
	}
}

// TestKeyKinds signs a DSSE statement and a blob with each kind of key
// and verifies both: Ed25519 uses Ed25519ph for blobs, as Sigstore does.
func TestKeyKinds(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(rsaKey)
	rsaPriv, err := ParsePrivateKey("rsa.key", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, k := range map[string]*PrivateKey{"p256": newKey(t, "p256"), "p384": newKey(t, "p384"), "ed25519": newKey(t, "ed25519"), "rsa": rsaPriv} {
		v := &Verifier{Keys: []*PublicKey{k.Public}}
		blob := []byte("an archive, say")
		b, err := SignBlob(ctx, blob, k)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := v.VerifyBlob(bytes.NewReader(blob), b); err != nil {
			t.Errorf("%s blob: %v", name, err)
		}
		if _, err := v.VerifyBlob(bytes.NewReader([]byte("another archive")), b); !errors.Is(err, ErrNotVerified) {
			t.Errorf("%s blob, other bytes: %v", name, err)
		}
		stmt, _ := newStatement(goldenPlugin, SignPredicateType, nil)
		b, err = bundleDSSE(ctx, k, stmt)
		if err != nil {
			t.Fatal(err)
		}
		bu, err := parseBundle(b)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.checkBundle(bu, true, digestArtifact(goldenPlugin)); err != nil {
			t.Errorf("%s DSSE: %v", name, err)
		}
		if _, err := v.checkBundle(bu, true, digestArtifact(digest.FromString("x"))); err == nil {
			t.Errorf("%s DSSE: verified for another digest", name)
		}
	}
}

// TestBlobBundleAsSignatureRefused: a message-signature bundle attached
// to a plugin is not an OCI signature.
func TestBlobBundleAsSignatureRefused(t *testing.T) {
	store, _ := goldenLayout(t)
	subject := resolveRef(t, store, "1.2.0")
	attachForTest(t, store, subject, golden(t, "blob.sigstore.json"))
	rep, err := (&Verifier{Keys: []*PublicKey{goldenPublicKey(t, "cosign.pub")}}).VerifyOCI(context.Background(), store, subject)
	if err != nil {
		t.Fatal(err) // cosign's real signature is there too
	}
	refusedMessage := false
	for _, s := range rep.Signatures {
		refusedMessage = refusedMessage || strings.Contains(s.Reason, "bare message signature")
	}
	if !refusedMessage {
		t.Errorf("report %+v", rep)
	}
}
