package oci

import (
	"context"
	"fmt"
	"io"
	"io/fs"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
)

// PullOptions control Pull. The zero value reads with the default limits
// and loads with agentplugin's defaults.
type PullOptions struct {
	Limits Limits
	Load   agentplugin.Options
	// OnFile, when set, is given each file of the layer, its path without
	// the NAME/ folder, as the layer is unpacked (see
	// archive.UnpackOptions.OnFile): only once the layer matched its
	// digest, but before the plugin is loaded and compared with the config,
	// which may still refuse it. A caller writing the files must undo them
	// when Pull fails.
	OnFile func(path string, mode fs.FileMode, data []byte) error
}

// Plugin is a plugin read from an OCI source and checked against the
// profile, its descriptors and its own plugin.json.
type Plugin struct {
	// Artifact holds the three blobs as read. Descriptor.Digest is the
	// installation identity; Layer is the archive with every entry under
	// NAME/.
	Artifact
	// PluginConfig is the parsed config.
	PluginConfig Config
	// Package is the loaded plugin; its Snapshot is the layer without the
	// NAME/ folder.
	Package *agentplugin.Package
}

// Pull resolves ref in src (see Resolve) and reads the plugin manifest,
// config and layer, refusing anything the profile does not allow (see the
// package documentation) before it is used. Pull writes nothing: a caller
// may, through OnFile.
func Pull(ctx context.Context, src Source, ref string, opts PullOptions) (*Plugin, error) {
	if r, ok := src.(*Repository); ok {
		if tag, dgst := splitSelector(ref); tag != "" && dgst == "" {
			return r.pullTag(ctx, tag, opts)
		}
	}
	desc, err := Resolve(ctx, src, ref)
	if err != nil {
		return nil, err
	}
	return PullDescriptor(ctx, src, desc, opts)
}

// pullTag is Pull of a tag in a registry: the manifest is fetched by tag
// in one request, its descriptor taken from the response's headers
// (oras-go's FetchReference), where resolving first cost a HEAD request
// more. The body is read as Pull reads any manifest: after the media
// type and size are checked, and against the descriptor.
func (r *Repository) pullTag(ctx context.Context, tag string, opts PullOptions) (*Plugin, error) {
	desc, rc, err := r.repo.Manifests().FetchReference(ctx, tag)
	if err != nil {
		return nil, resolveError(tag, err)
	}
	defer rc.Close()
	return pullManifest(ctx, r, fetched{rc}, desc, opts)
}

// fetched is a Fetcher of content already being read.
type fetched struct{ rc io.ReadCloser }

func (f fetched) Fetch(context.Context, ocispec.Descriptor) (io.ReadCloser, error) { return f.rc, nil }

// PullDescriptor is Pull of a manifest already resolved.
func PullDescriptor(ctx context.Context, src content.Fetcher, desc ocispec.Descriptor, opts PullOptions) (*Plugin, error) {
	return pullManifest(ctx, src, src, desc, opts)
}

// pullManifest is PullDescriptor with the manifest read from manifests.
func pullManifest(ctx context.Context, src, manifests content.Fetcher, desc ocispec.Descriptor, opts PullOptions) (*Plugin, error) {
	lim := opts.Limits.withDefaults()
	if err := checkManifestType(desc.MediaType); err != nil {
		return nil, fmt.Errorf("%s %w", desc.Digest, err)
	}
	mb, err := fetchVerified(ctx, manifests, desc, lim.MaxManifestBytes, "MaxManifestBytes")
	if err != nil {
		return nil, err
	}
	m, err := parseManifest(mb)
	if err != nil {
		return nil, fmt.Errorf("%s %w", desc.Digest, err)
	}
	p := &Plugin{Artifact: Artifact{Descriptor: desc, Manifest: mb, ConfigDescriptor: m.Config, LayerDescriptor: m.Layers[0], Annotations: m.Annotations}}
	p.Descriptor.MediaType, p.Descriptor.ArtifactType = ManifestMediaType, ArtifactType
	// Both sizes are checked before either blob is fetched.
	if m.Config.Size > lim.MaxConfigBytes {
		return nil, &LimitError{Limit: "MaxConfigBytes", Value: lim.MaxConfigBytes, Path: m.Config.Digest.String()}
	}
	if m.Layers[0].Size > lim.Archive.MaxArchiveBytes {
		return nil, &LimitError{Limit: "MaxArchiveBytes", Value: lim.Archive.MaxArchiveBytes, Path: m.Layers[0].Digest.String()}
	}
	// The layer travels while the config is fetched and parsed: from a
	// registry each blob is a round trip, and the layer's request does not
	// depend on the config. A config error still comes first, as the
	// config is read first, and stops the layer's transfer.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type blob struct {
		b   []byte
		err error
	}
	layerc := make(chan blob, 1)
	go func() {
		b, err := fetchVerified(ctx, src, m.Layers[0], lim.Archive.MaxArchiveBytes, "MaxArchiveBytes")
		layerc <- blob{b, err}
	}()
	if p.Config, err = fetchVerified(ctx, src, m.Config, lim.MaxConfigBytes, "MaxConfigBytes"); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cfg, err := parseConfig(p.Config)
	if err != nil {
		return nil, err
	}
	p.PluginConfig = *cfg
	layer := <-layerc
	if layer.err != nil {
		return nil, fmt.Errorf("layer: %w", layer.err)
	}
	p.Layer = layer.b
	snap, err := archive.Unpack(p.Layer, archive.UnpackOptions{Limits: lim.Archive, Root: cfg.Name, GNUMagic: true, OnFile: opts.OnFile})
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	if p.Package, err = agentplugin.Load(snap, opts.Load); err != nil {
		return nil, err
	}
	if err := cfg.check(p.Package); err != nil {
		return nil, err
	}
	return p, nil
}

// check compares the config with the plugin.json it describes.
func (c *Config) check(pkg *agentplugin.Package) error {
	version := ""
	if c.Version != nil {
		version = *c.Version
	}
	switch {
	case c.Name != pkg.Name:
		return fmt.Errorf("%w: config name %q, plugin.json name %q", ErrConfig, c.Name, pkg.Name)
	case c.Version == nil && pkg.Version != "", c.Version != nil && version != pkg.Version:
		return fmt.Errorf("%w: config version %s, plugin.json version %q", ErrConfig, quoteOrNull(c.Version), pkg.Version)
	case c.PluginSchema != pluginSchema(pkg):
		return fmt.Errorf("%w: config pluginSchema %q, plugin.json $schema %q", ErrConfig, c.PluginSchema, pluginSchema(pkg))
	}
	return nil
}

func quoteOrNull(s *string) string {
	if s == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *s)
}
