package oci

import (
	"encoding/json"
	"fmt"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/plugkit/plugkit/internal/jsontree"
)

// maxJSONDepth bounds the nesting of a manifest or config: the profile's
// documents are three levels deep.
const maxJSONDepth = 32

// strictJSON decodes src into v after checking that it is one valid JSON
// value without duplicate member names, so that no two readers can see
// different documents in it.
func strictJSON(src []byte, v any) error {
	if _, err := jsontree.Parse(src, maxJSONDepth); err != nil {
		return err
	}
	return json.Unmarshal(src, v)
}

// manifestDoc is what the profile reads of a manifest, mediaType and
// artifactType as written (not defaulted).
type manifestDoc struct {
	manifestHead
	Manifests   json.RawMessage   `json:"manifests"`
	Annotations map[string]string `json:"annotations"`
}

// manifestHead are the members of a manifest every reader of one decodes
// the same way (manifestDoc, and a layout's manifestFields).
type manifestHead struct {
	SchemaVersion int                  `json:"schemaVersion"`
	MediaType     string               `json:"mediaType"`
	ArtifactType  string               `json:"artifactType"`
	Config        ocispec.Descriptor   `json:"config"`
	Layers        []ocispec.Descriptor `json:"layers"`
}

// isIndexType reports whether a media type is an image index or a Docker
// manifest list.
func isIndexType(mt string) bool { return mt == indexMediaType || mt == dockerListMediaType }

// checkManifestType refuses a descriptor media type that is not the
// profile's manifest. A layout resolves a digest it does not list to a
// plain blob (application/octet-stream); its content decides then.
func checkManifestType(mt string) error {
	switch {
	case isIndexType(mt):
		return fmt.Errorf("%w (media type %s)", ErrIndex, mt)
	case mt == ManifestMediaType, mt == octetStreamMediaType, mt == "":
		return nil
	default:
		return fmt.Errorf("%w: media type %q, want %s", ErrNotPlugin, mt, ManifestMediaType)
	}
}

// parseManifest checks a manifest against the profile: media type,
// artifactType, config type, one layer of the layer type, and the sizes the
// limits allow.
func parseManifest(b []byte) (*manifestDoc, error) { return parseHeldManifest(nil, b) }

// parseHeldManifest is parseManifest of b, from its decoded form when held
// (the same content, held by a layout) is not nil.
func parseHeldManifest(held *layoutManifest, b []byte) (*manifestDoc, error) {
	var m manifestDoc
	if err := strictDecode(held, b, &m, (*manifestFields).manifestDoc); err != nil {
		return nil, fmt.Errorf("%w: manifest: %v", ErrNotPlugin, err)
	}
	switch {
	case isIndexType(m.MediaType) || m.Manifests != nil && m.Layers == nil:
		return nil, ErrIndex
	case m.MediaType != ManifestMediaType:
		return nil, fmt.Errorf("%w: manifest media type %q, want %s", ErrNotPlugin, m.MediaType, ManifestMediaType)
	case m.SchemaVersion != 2:
		return nil, fmt.Errorf("%w: schemaVersion %d, want 2", ErrNotPlugin, m.SchemaVersion)
	case m.ArtifactType == "":
		return nil, fmt.Errorf("%w: the manifest has no artifactType (want %s)", ErrNotPlugin, ArtifactType)
	case m.ArtifactType != ArtifactType:
		return nil, fmt.Errorf("%w: artifactType %q, want %s", ErrNotPlugin, m.ArtifactType, ArtifactType)
	case m.Config.MediaType != ConfigMediaType:
		return nil, fmt.Errorf("%w: config media type %q, want %s", ErrNotPlugin, m.Config.MediaType, ConfigMediaType)
	case len(m.Layers) != 1:
		return nil, fmt.Errorf("%w: %d layers, want exactly one", ErrNotPlugin, len(m.Layers))
	case m.Layers[0].MediaType != LayerMediaType:
		return nil, fmt.Errorf("%w: layer media type %q, want %s", ErrNotPlugin, m.Layers[0].MediaType, LayerMediaType)
	}
	return &m, nil
}

// parseConfig reads the plugin config strictly: every field present and of
// its type (version a string or null); unknown fields are ignored.
func parseConfig(b []byte) (*Config, error) {
	var raw map[string]json.RawMessage
	if err := strictJSON(b, &raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	for _, k := range []string{"schemaVersion", "name", "version", "pluginSchema"} {
		if _, ok := raw[k]; !ok {
			return nil, fmt.Errorf("%w: no %q", ErrConfig, k)
		}
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if c.SchemaVersion != 1 {
		return nil, fmt.Errorf("%w: schemaVersion %d, want 1", ErrConfig, c.SchemaVersion)
	}
	if c.Name == "" {
		return nil, fmt.Errorf("%w: empty name", ErrConfig)
	}
	return &c, nil
}
