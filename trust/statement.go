package trust

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/opencontainers/go-digest"
)

// Media and predicate types of what cosign v3 writes.
const (
	// BundleMediaType is a Sigstore bundle v0.3, the layer and artifactType
	// of a signature referrer.
	BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// InTotoPayloadType is the DSSE payload type of an in-toto statement.
	InTotoPayloadType = "application/vnd.in-toto+json"
	// StatementType is the in-toto statement version cosign writes.
	StatementType = "https://in-toto.io/Statement/v1"
	// SignPredicateType is the predicate of `cosign sign`: "the signer
	// vouches for this digest", with an empty predicate.
	SignPredicateType = "https://sigstore.dev/cosign/sign/v1"
)

// predicateShorthands are cosign's names for common predicate types, so that
// `--type slsaprovenance1` means what it means to cosign.
var predicateShorthands = map[string]string{
	"slsaprovenance":   "https://slsa.dev/provenance/v0.2",
	"slsaprovenance02": "https://slsa.dev/provenance/v0.2",
	"slsaprovenance1":  "https://slsa.dev/provenance/v1",
	"spdx":             "https://spdx.dev/Document",
	"spdxjson":         "https://spdx.dev/Document",
	"cyclonedx":        "https://cyclonedx.org/bom",
	"vuln":             "https://cosign.sigstore.dev/attestation/vuln/v1",
	"openvex":          "https://openvex.dev/ns",
	"custom":           "https://cosign.sigstore.dev/attestation/v1",
}

// PredicateType turns a --type value into a predicate type URI: one of
// cosign's shorthands (slsaprovenance, slsaprovenance1, spdx, spdxjson,
// cyclonedx, vuln, openvex, custom) or an absolute URI, returned as given.
func PredicateType(s string) (string, error) {
	if t, ok := predicateShorthands[s]; ok {
		return t, nil
	}
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() {
		return "", fmt.Errorf("predicate type %q is neither an absolute URI nor one of cosign's shorthands (slsaprovenance1, spdxjson, cyclonedx, openvex, …)", s)
	}
	return s, nil
}

// statement is an in-toto v1 statement with its fields in the order cosign
// writes them, so that plugkit's payload is the same bytes as cosign's for
// the same digest.
type statement struct {
	Type          string             `json:"_type"`
	Subject       []statementSubject `json:"subject"`
	PredicateType string             `json:"predicateType"`
	Predicate     json.RawMessage    `json:"predicate"`
}

type statementSubject struct {
	Digest      map[string]string `json:"digest"`
	Annotations map[string]string `json:"annotations"`
}

// newStatement is the statement over one digest, with no subject name (so
// the signature survives copying to any registry or layout, as cosign's
// does) and predicate as given (compacted), or {} when nil.
func newStatement(subject digest.Digest, predicateType string, predicate []byte) ([]byte, error) {
	if err := subject.Validate(); err != nil {
		return nil, fmt.Errorf("subject digest: %w", err)
	}
	pred := json.RawMessage("{}")
	if predicate != nil {
		var err error
		if pred, err = compactPredicate(predicate); err != nil {
			return nil, err
		}
	}
	return marshalCompact(statement{
		Type: StatementType,
		Subject: []statementSubject{{
			Digest:      map[string]string{subject.Algorithm().String(): subject.Encoded()},
			Annotations: map[string]string{},
		}},
		PredicateType: predicateType,
		Predicate:     pred,
	})
}

// CheckPredicate reports whether b can be an attestation's predicate: a
// JSON object.
func CheckPredicate(b []byte) error {
	_, err := compactPredicate(b)
	return err
}

func compactPredicate(b []byte) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, fmt.Errorf("predicate: not JSON: %w", err)
	}
	if buf.Len() == 0 || buf.Bytes()[0] != '{' {
		return nil, errors.New("predicate: an in-toto predicate is a JSON object")
	}
	return buf.Bytes(), nil
}

// marshalCompact is json.Marshal without HTML escaping, which is how Go
// tools on the other side (cosign, go-containerregistry) write JSON too
// for these documents' characters.
func marshalCompact(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
