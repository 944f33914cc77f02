package trust

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"google.golang.org/protobuf/encoding/protojson"
)

// bundleDSSE signs payload (an in-toto statement) into a bundle v0.3
// holding a DSSE envelope and the key's hint, what cosign writes for OCI
// signatures and attestations.
func bundleDSSE(ctx context.Context, key *PrivateKey, payload []byte) ([]byte, error) {
	return signBundle(ctx, key, &sign.DSSEData{Data: payload, PayloadType: InTotoPayloadType}, false)
}

// bundleMessage signs data into a bundle v0.3 holding a message signature
// over its digest, what `cosign sign-blob --new-bundle-format` writes.
func bundleMessage(ctx context.Context, key *PrivateKey, data []byte) ([]byte, error) {
	return signBundle(ctx, key, &sign.PlainData{Data: data}, true)
}

func signBundle(ctx context.Context, key *PrivateKey, content sign.Content, message bool) ([]byte, error) {
	kp, err := key.keypair(message)
	if err != nil {
		return nil, err
	}
	pb, err := sign.Bundle(content, kp, sign.BundleOptions{Context: ctx})
	if err != nil {
		return nil, fmt.Errorf("signing: %w", err)
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
