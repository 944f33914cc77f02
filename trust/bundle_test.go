package trust

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"testing"

	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore/pkg/signature"
	"google.golang.org/protobuf/encoding/protojson"
)

// signKeypair adapts keypair to sigstore-go's sign.Keypair, so that the
// test can ask sign.Bundle for the bundle plugkit builds itself.
type signKeypair struct{ *keypair }

func (p signKeypair) GetHashAlgorithm() protocommon.HashAlgorithm { return p.alg.GetProtoHashType() }
func (p signKeypair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return p.alg.GetSignatureAlgorithm()
}
func (p signKeypair) GetHint() []byte                { return []byte(p.key.Public.ID) }
func (p signKeypair) GetPublicKey() crypto.PublicKey { return p.key.Public.Key }
func (p signKeypair) GetPublicKeyPem() (string, error) {
	b, err := p.key.Public.PEM()
	return string(b), err
}
func (p signKeypair) GetKeyAlgorithm() string {
	switch p.alg.GetKeyType() {
	case signature.ECDSA:
		return "ECDSA"
	case signature.RSA:
		return "RSA"
	}
	return "ED25519"
}

// TestBundleMatchesSigstoreGo: plugkit builds its bundles itself, to keep
// sign.Bundle's network clients out of the binary; with an Ed25519 key,
// whose signatures are deterministic, they are byte for byte what
// sigstore-go's sign.Bundle writes, for DSSE envelopes and message
// signatures alike.
func TestBundleMatchesSigstoreGo(t *testing.T) {
	ctx := context.Background()
	key := newKey(t, "ed25519")
	payload := []byte(`{"_type":"https://in-toto.io/Statement/v1"}`)
	for _, c := range []struct {
		name    string
		message bool
		content sign.Content
		ours    func() ([]byte, error)
	}{
		{"dsse", false, &sign.DSSEData{Data: payload, PayloadType: InTotoPayloadType}, func() ([]byte, error) { return bundleDSSE(ctx, key, payload) }},
		{"message", true, &sign.PlainData{Data: payload}, func() ([]byte, error) { return bundleMessage(ctx, key, payload) }},
	} {
		got, err := c.ours()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		kp, err := key.keypair(c.message)
		if err != nil {
			t.Fatal(err)
		}
		pb, err := sign.Bundle(c.content, signKeypair{kp}, sign.BundleOptions{Context: ctx})
		if err != nil {
			t.Fatalf("%s: sign.Bundle: %v", c.name, err)
		}
		want, err := protojson.Marshal(pb)
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, compact.Bytes()) {
			t.Errorf("%s:\nplugkit    %s\nsigstore-go %s", c.name, got, compact.Bytes())
		}
	}
}
