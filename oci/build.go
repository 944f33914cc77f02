package oci

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
)

// Artifact is a plugin built as the three blobs of the profile, ready to
// push: the manifest's digest is the plugin's identity.
type Artifact struct {
	Manifest         []byte
	Descriptor       ocispec.Descriptor // of the manifest, with ArtifactType
	Config           []byte
	ConfigDescriptor ocispec.Descriptor
	Layer            []byte
	LayerDescriptor  ocispec.Descriptor
	Annotations      map[string]string // the manifest's
}

// BuildOptions control Build. The zero value builds the reproducible
// artifact.
type BuildOptions struct {
	// Created, when not zero, is written as the
	// org.opencontainers.image.created annotation (UTC, RFC 3339); leave it
	// zero for a digest that depends on the plugin only. See
	// SourceDateEpoch.
	Created time.Time
}

// Config is the plugin config blob of the profile.
type Config struct {
	SchemaVersion int     `json:"schemaVersion"`
	Name          string  `json:"name"`
	Version       *string `json:"version"`
	PluginSchema  string  `json:"pluginSchema"`
}

// Build packs a loaded plugin into the profile's layer (every entry under
// NAME/) and writes its config and manifest. The same plugin and options
// always give the same bytes.
func Build(pkg *agentplugin.Package, opts BuildOptions) (*Artifact, error) {
	layer, err := archive.Pack(pkg.Snapshot, archive.PackOptions{Root: pkg.Name})
	if err != nil {
		return nil, err
	}
	cfg := Config{SchemaVersion: 1, Name: pkg.Name, PluginSchema: pluginSchema(pkg)}
	if pkg.Version != "" {
		cfg.Version = &pkg.Version
	}
	cfgBytes, err := marshal(cfg)
	if err != nil {
		return nil, err
	}
	a := &Artifact{
		Config:           cfgBytes,
		ConfigDescriptor: descriptorOf(ConfigMediaType, cfgBytes),
		Layer:            layer,
		LayerDescriptor:  descriptorOf(LayerMediaType, layer),
		Annotations:      manifestAnnotations(pkg, opts.Created),
	}
	a.LayerDescriptor.Annotations = map[string]string{annotationTitle: pkg.Name + ".tar.gz"}
	m := ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ManifestMediaType,
		ArtifactType: ArtifactType,
		Config:       a.ConfigDescriptor,
		Layers:       []ocispec.Descriptor{a.LayerDescriptor},
		Annotations:  a.Annotations,
	}
	if a.Manifest, err = marshal(m); err != nil {
		return nil, err
	}
	a.Descriptor = descriptorOf(ManifestMediaType, a.Manifest)
	a.Descriptor.ArtifactType = ArtifactType
	return a, nil
}

// pluginSchema is the $schema plugin.json declares.
func pluginSchema(pkg *agentplugin.Package) string {
	var s string
	json.Unmarshal(pkg.Manifest["$schema"], &s) // Load accepted it: a string
	return s
}

// manifestAnnotations maps plugin.json onto the standard annotations.
func manifestAnnotations(pkg *agentplugin.Package, created time.Time) map[string]string {
	a := map[string]string{annotationTitle: pkg.Name}
	for key, v := range map[string]string{
		annotationDescription: pkg.Description,
		annotationVersion:     pkg.Version,
		annotationLicenses:    pkg.License,
		annotationSource:      pkg.Repository,
	} {
		if v != "" {
			a[key] = v
		}
	}
	if !created.IsZero() {
		a[annotationCreated] = created.UTC().Format(time.RFC3339)
	}
	return a
}

// descriptorOf describes b.
func descriptorOf(mediaType string, b []byte) ocispec.Descriptor {
	return ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(b), Size: int64(len(b))}
}

// marshal is compact JSON without HTML escaping: the bytes a reader sees
// are the text plugin.json gave.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("oci: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
