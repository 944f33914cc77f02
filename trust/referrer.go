package trust

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// Annotations cosign sets on a bundle referrer manifest.
const (
	// AnnotationBundleContent says what the bundle holds: "dsse-envelope"
	// for signatures and attestations of OCI artifacts.
	AnnotationBundleContent = "dev.sigstore.bundle.content"
	// AnnotationPredicateType repeats the statement's predicate type so
	// that tools can pick referrers without fetching bundles. It is not
	// signed: verification reads the type from the signed statement.
	AnnotationPredicateType = "dev.sigstore.bundle.predicateType"
)

// bundleMediaTypePrefix matches every Sigstore bundle media type (v0.1 to
// v0.3 and their "+json;version=" spellings); the bundle parser checks the
// version itself.
const bundleMediaTypePrefix = "application/vnd.dev.sigstore.bundle"

// emptyConfig is the OCI empty descriptor's content, the config of every
// referrer cosign writes.
var emptyConfig = []byte("{}")

// referrerManifest is an OCI image manifest with its fields in the order
// go-containerregistry (cosign) writes them, including the config
// descriptor's artifactType, so that plugkit's referrer is the same bytes
// as cosign's for the same bundle and time.
type referrerManifest struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	Config        configDescriptor  `json:"config"`
	Layers        []plainDescriptor `json:"layers"`
	Annotations   map[string]string `json:"annotations,omitempty"`
	Subject       *plainDescriptor  `json:"subject,omitempty"`
	ArtifactType  string            `json:"artifactType,omitempty"`
}

type plainDescriptor struct {
	MediaType string        `json:"mediaType"`
	Size      int64         `json:"size"`
	Digest    digest.Digest `json:"digest"`
}

type configDescriptor struct {
	MediaType    string        `json:"mediaType"`
	Size         int64         `json:"size"`
	Digest       digest.Digest `json:"digest"`
	ArtifactType string        `json:"artifactType,omitempty"`
}

// emptyConfigDescriptor describes emptyConfig.
func emptyConfigDescriptor() ocispec.Descriptor {
	return ocispec.Descriptor{MediaType: ocispec.MediaTypeEmptyJSON, Digest: digest.FromBytes(emptyConfig), Size: int64(len(emptyConfig))}
}

// newReferrerManifest is the manifest attaching the bundle described by
// layer to subject, as `cosign sign --new-bundle-format` writes it.
func newReferrerManifest(subject, layer ocispec.Descriptor, predicateType string, created time.Time) ([]byte, error) {
	cfg := emptyConfigDescriptor()
	return marshalCompact(referrerManifest{
		SchemaVersion: 2,
		MediaType:     ocispec.MediaTypeImageManifest,
		Config:        configDescriptor{MediaType: cfg.MediaType, Size: cfg.Size, Digest: cfg.Digest, ArtifactType: BundleMediaType},
		Layers:        []plainDescriptor{{MediaType: layer.MediaType, Size: layer.Size, Digest: layer.Digest}},
		Annotations: map[string]string{
			AnnotationBundleContent:   "dsse-envelope",
			AnnotationPredicateType:   predicateType,
			ocispec.AnnotationCreated: created.UTC().Format(time.RFC3339),
		},
		Subject:      &plainDescriptor{MediaType: subject.MediaType, Size: subject.Size, Digest: subject.Digest},
		ArtifactType: BundleMediaType,
	})
}

// isBundleType reports whether an artifactType or media type names a
// Sigstore bundle.
func isBundleType(t string) bool { return strings.HasPrefix(t, bundleMediaTypePrefix) }

// otherArtifactTypes are artifact types plugkit knows to be something
// else than a Sigstore bundle: a referrer listed as one is skipped unread.
var otherArtifactTypes = map[string]bool{
	"application/vnd.cncf.notary.signature": true, // Notary Project signatures
	// cosign's signatures, attestations and SBOMs of its older format,
	// attached as referrers.
	"application/vnd.dev.cosign.artifact.sig.v1+json":  true,
	"application/vnd.dev.cosign.artifact.att.v1+json":  true,
	"application/vnd.dev.cosign.artifact.sbom.v1+json": true,
	"application/spdx+json":                            true,
	"application/vnd.cyclonedx+json":                   true,
}

// referrerKind is what a listing says of a referrer.
type referrerKind int

const (
	// listedUnknown: the listed artifactType is empty or one plugkit does
	// not know (go-containerregistry's registry lists a referrer's config
	// media type there, the empty descriptor's for cosign's bundles), so
	// only the manifest can tell.
	listedUnknown referrerKind = iota
	listedBundle
	listedOther
)

// listedKind classifies a referrer by its descriptor in a referrers
// listing, without reading it. The predicate type annotation, which the
// referrers API copies from the manifest, tells a bundle of another
// predicate type than want.
func listedKind(d ocispec.Descriptor, want string) referrerKind {
	switch t := d.Annotations[AnnotationPredicateType]; {
	case d.MediaType != ocispec.MediaTypeImageManifest, t != "" && t != want:
		return listedOther
	case isBundleType(d.ArtifactType):
		return listedBundle
	case otherArtifactTypes[d.ArtifactType]:
		return listedOther
	}
	return listedUnknown
}

// isBundleManifest decides from a referrer manifest itself whether it
// holds a Sigstore bundle: by its artifactType when it has one, else by
// its config's media type, else (an absent or empty config says nothing)
// by its layers' media types.
func isBundleManifest(m *ocispec.Manifest) bool {
	switch {
	case m.ArtifactType != "":
		return isBundleType(m.ArtifactType)
	case m.Config.MediaType != "" && m.Config.MediaType != ocispec.MediaTypeEmptyJSON:
		return isBundleType(m.Config.MediaType)
	}
	for _, l := range m.Layers {
		if isBundleType(l.MediaType) {
			return true
		}
	}
	return false
}

// errNotBundle marks a referrer that is something else than a Sigstore
// bundle (an SBOM artifact, a Notary signature): not a candidate at all.
var errNotBundle = errors.New("not a Sigstore bundle referrer")

// bundleLayer checks that manifest bytes are a bundle referrer of subject
// and returns the descriptor of its bundle layer and the manifest's
// annotations.
func bundleLayer(manifest []byte, subject digest.Digest, maxBundle int64) (ocispec.Descriptor, map[string]string, error) {
	var m ocispec.Manifest
	if err := json.Unmarshal(manifest, &m); err != nil {
		return ocispec.Descriptor{}, nil, fmt.Errorf("referrer manifest is not JSON: %w", err)
	}
	if m.MediaType != ocispec.MediaTypeImageManifest || !isBundleManifest(&m) {
		return ocispec.Descriptor{}, nil, errNotBundle
	}
	fail := func(format string, args ...any) (ocispec.Descriptor, map[string]string, error) {
		return ocispec.Descriptor{}, m.Annotations, fmt.Errorf(format, args...)
	}
	if m.Subject == nil || m.Subject.Digest != subject {
		return fail("the referrer's subject is not %s", subject)
	}
	if len(m.Layers) != 1 {
		return fail("the referrer has %d layers; a bundle referrer has exactly one", len(m.Layers))
	}
	l := m.Layers[0]
	if !isBundleType(l.MediaType) {
		return fail("the referrer's layer media type is %q, not a Sigstore bundle", l.MediaType)
	}
	if err := l.Digest.Validate(); err != nil {
		return fail("the referrer's layer digest: %v", err)
	}
	if l.Size < 0 || l.Size > maxBundle {
		return fail("the bundle is %d bytes, over the limit of %d (MaxBundleBytes)", l.Size, maxBundle)
	}
	return l, m.Annotations, nil
}
