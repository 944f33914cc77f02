package oci

import (
	"errors"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/snapshot"
)

// The media types of the profile (Colossus's).
const (
	// ManifestMediaType is the only manifest media type a plugin has.
	ManifestMediaType = "application/vnd.oci.image.manifest.v1+json"
	// ArtifactType marks a manifest as a plugin; without it, it is not one.
	ArtifactType = "application/vnd.colossus.agent-plugin.v1"
	// ConfigMediaType is the config blob's media type.
	ConfigMediaType = "application/vnd.colossus.agent-plugin.config.v1+json"
	// LayerMediaType is the one layer's media type: a plugin archive.
	LayerMediaType = "application/vnd.colossus.agent-plugin.content.v1.tar+gzip"
)

// Media types that are indexes, never a plugin.
const (
	indexMediaType        = "application/vnd.oci.image.index.v1+json"
	dockerListMediaType   = "application/vnd.docker.distribution.manifest.list.v2+json"
	dockerManifestType    = "application/vnd.docker.distribution.manifest.v2+json"
	octetStreamMediaType  = "application/octet-stream"
	emptyConfigMediaType  = "application/vnd.oci.empty.v1+json"
	annotationRefName     = "org.opencontainers.image.ref.name"
	annotationTitle       = "org.opencontainers.image.title"
	annotationDescription = "org.opencontainers.image.description"
	annotationVersion     = "org.opencontainers.image.version"
	annotationLicenses    = "org.opencontainers.image.licenses"
	annotationSource      = "org.opencontainers.image.source"
	annotationCreated     = "org.opencontainers.image.created"
)

// Default limits of what Pull reads.
const (
	DefaultMaxManifestBytes = 4 << 20  // a manifest (or index) fetched
	DefaultMaxConfigBytes   = 64 << 10 // a plugin config
)

// Limits bound what Pull reads. A zero field takes its default; the layer is
// bounded by Archive.MaxArchiveBytes (archive's default 32 MiB) and unpacked
// within Archive.
type Limits struct {
	MaxManifestBytes int64
	MaxConfigBytes   int64
	Archive          archive.Limits
}

func (l Limits) withDefaults() Limits {
	if l.MaxManifestBytes <= 0 {
		l.MaxManifestBytes = DefaultMaxManifestBytes
	}
	if l.MaxConfigBytes <= 0 {
		l.MaxConfigBytes = DefaultMaxConfigBytes
	}
	if l.Archive.MaxArchiveBytes <= 0 {
		l.Archive.MaxArchiveBytes = archive.DefaultMaxArchiveBytes
	}
	return l
}

// The reasons Pull refuses an artifact; every refusal matches one of them,
// a *LimitError (ErrLimit), one of archive's errors, or an
// *agentplugin.RejectedError.
var (
	// ErrIndex: an image index or manifest list where a plugin manifest is
	// expected.
	ErrIndex = errors.New("is an index; give the digest of one plugin manifest")
	// ErrNotPlugin: another media type or artifactType, or not exactly one
	// layer of the layer type.
	ErrNotPlugin = errors.New("not an Agent Plugin artifact")
	// ErrDescriptor: content whose size or digest differs from its
	// descriptor.
	ErrDescriptor = errors.New("content does not match its descriptor")
	// ErrConfig: a config that is malformed or disagrees with plugin.json.
	ErrConfig = errors.New("invalid plugin config")
	// ErrAmbiguous: a layout with several plugin manifests read without an
	// exact digest.
	ErrAmbiguous = errors.New("several plugin manifests; give the exact digest")
	// ErrNoPlugin: a layout, tag or digest with no plugin manifest.
	ErrNoPlugin = errors.New("no plugin manifest found")
	// ErrReference: a reference that cannot be parsed.
	ErrReference = errors.New("invalid reference")
)

// ErrLimit is matched by every *LimitError, as in snapshot and archive.
var ErrLimit = snapshot.ErrLimit

// LimitError names the limit a manifest, config or layer crossed.
type LimitError = snapshot.LimitError
