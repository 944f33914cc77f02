package trust

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"google.golang.org/protobuf/encoding/protojson"
)

// bundleV03 is the media type of the bundles plugkit writes, cosign's.
const bundleV03 = "application/vnd.dev.sigstore.bundle.v0.3+json"

// bundleDSSE signs payload (an in-toto statement) into a bundle v0.3
// holding a DSSE envelope and the key's hint, what cosign writes for OCI
// signatures and attestations.
func bundleDSSE(ctx context.Context, key *PrivateKey, payload []byte) ([]byte, error) {
	kp, err := key.keypair(false)
	if err != nil {
		return nil, err
	}
	pae := fmt.Appendf(nil, "DSSEv1 %d %s %d %s", len(InTotoPayloadType), InTotoPayloadType, len(payload), payload)
	sig, _, err := kp.SignData(ctx, pae)
	if err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	return marshalBundle(kp, &protobundle.Bundle{Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{
		Payload:     payload,
		PayloadType: InTotoPayloadType,
		Signatures:  []*protodsse.Signature{{Sig: sig}},
	}}})
}

// bundleMessage signs data into a bundle v0.3 holding a message signature
// over its digest, what `cosign sign-blob --new-bundle-format` writes.
func bundleMessage(ctx context.Context, key *PrivateKey, data []byte) ([]byte, error) {
	kp, err := key.keypair(true)
	if err != nil {
		return nil, err
	}
	sig, digest, err := kp.SignData(ctx, data)
	if err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	return marshalBundle(kp, &protobundle.Bundle{Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
		MessageDigest: &protocommon.HashOutput{Algorithm: kp.alg.GetProtoHashType(), Digest: digest},
		Signature:     sig,
	}}})
}

// marshalBundle writes pb, whose content is set, as a bundle v0.3 whose
// verification material is the key's hint, as sigstore-go's sign.Bundle does for a key with no
// certificate, timestamp or log; building it here keeps sign.Bundle's
// network clients (Fulcio, Rekor, TSA) and their package initialisers out
// of every plugkit process.
func marshalBundle(kp *keypair, pb *protobundle.Bundle) ([]byte, error) {
	pb.MediaType = bundleV03
	pb.VerificationMaterial = &protobundle.VerificationMaterial{
		Content: &protobundle.VerificationMaterial_PublicKey{
			PublicKey: &protocommon.PublicKeyIdentifier{Hint: kp.key.Public.ID},
		},
	}
	b, err := protojson.Marshal(pb)
	if err != nil {
		return nil, err
	}
	// protojson varies its spacing on purpose; compact JSON is what cosign
	// writes and what every reader accepts.
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// parseBundle reads a bundle's JSON. Size is bounded by the caller.
func parseBundle(b []byte) (*bundle.Bundle, error) {
	var bu bundle.Bundle
	if err := bu.UnmarshalJSON(b); err != nil {
		return nil, fmt.Errorf("not a Sigstore bundle: %w", err)
	}
	return &bu, nil
}
