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
	lim := opts.Limits.withDefaults()
	p, err := readManifestRef(ctx, src, ref, lim)
	if err != nil {
		return nil, err
	}
	return p.readBlobs(ctx, src, lim, opts)
}

// PullDescriptor is Pull of a manifest already resolved.
func PullDescriptor(ctx context.Context, src content.Fetcher, desc ocispec.Descriptor, opts PullOptions) (*Plugin, error) {
	lim := opts.Limits.withDefaults()
	p, err := readManifest(ctx, src, desc, lim)
	if err != nil {
		return nil, err
	}
	return p.readBlobs(ctx, src, lim, opts)
}

// readManifestRef resolves ref in src and reads the manifest it names
// (readManifest). From a registry, a tag's manifest is fetched in one
// request, its descriptor taken from the response's headers (oras-go's
// FetchReference), where resolving first cost a HEAD request more.
func readManifestRef(ctx context.Context, src Source, ref string, lim Limits) (*Plugin, error) {
	if r, ok := src.(*Repository); ok {
		if tag, dgst := splitSelector(ref); tag != "" && dgst == "" {
			desc, rc, err := r.repo.Manifests().FetchReference(ctx, tag)
			if err != nil {
				return nil, resolveError(tag, err)
			}
			defer rc.Close()
			return readManifest(ctx, fetched{rc}, desc, lim)
		}
	}
	desc, err := Resolve(ctx, src, ref)
	if err != nil {
		return nil, err
	}
	return readManifest(ctx, src, desc, lim)
}

// fetched is a Fetcher of content already being read.
type fetched struct{ rc io.ReadCloser }

func (f fetched) Fetch(context.Context, ocispec.Descriptor) (io.ReadCloser, error) { return f.rc, nil }

// readManifest reads the manifest desc names from manifests and checks
// it against the profile, and the config and layer descriptors it lists
// against the limits, before either blob is fetched. The Plugin returned
// has its manifest, descriptors and annotations, no blob yet.
func readManifest(ctx context.Context, manifests content.Fetcher, desc ocispec.Descriptor, lim Limits) (*Plugin, error) {
	if err := checkManifestType(desc.MediaType); err != nil {
		return nil, fmt.Errorf("%s %w", desc.Digest, err)
	}
	mb, err := fetchVerified(ctx, manifests, desc, lim.MaxManifestBytes, "MaxManifestBytes")
	if err != nil {
		return nil, err
	}
	m, err := parseHeldManifest(heldManifest(manifests, desc.Digest), mb)
	if err != nil {
		return nil, fmt.Errorf("%s %w", desc.Digest, err)
	}
	p := &Plugin{Artifact: Artifact{Descriptor: desc, Manifest: mb, ConfigDescriptor: m.Config, LayerDescriptor: m.Layers[0], Annotations: m.Annotations}}
	p.Descriptor.MediaType, p.Descriptor.ArtifactType = ManifestMediaType, ArtifactType
	// Both sizes are checked against the limits first, then both
	// descriptors whole, before either blob is fetched.
	if m.Config.Size > lim.MaxConfigBytes {
		return nil, &LimitError{Limit: "MaxConfigBytes", Value: lim.MaxConfigBytes, Path: m.Config.Digest.String()}
	}
	if m.Layers[0].Size > lim.Archive.MaxArchiveBytes {
		return nil, &LimitError{Limit: "MaxArchiveBytes", Value: lim.Archive.MaxArchiveBytes, Path: m.Layers[0].Digest.String()}
	}
	if err := checkDescriptor(m.Config, lim.MaxConfigBytes, "MaxConfigBytes"); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := checkDescriptor(m.Layers[0], lim.Archive.MaxArchiveBytes, "MaxArchiveBytes"); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return p, nil
}

// readConfig fetches, checks and parses the config of p's manifest.
func (p *Plugin) readConfig(ctx context.Context, src content.Fetcher, lim Limits) error {
	b, err := fetchVerified(ctx, src, p.ConfigDescriptor, lim.MaxConfigBytes, "MaxConfigBytes")
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	cfg, err := parseConfig(b)
	if err != nil {
		return err
	}
	p.Config, p.PluginConfig = b, *cfg
	return nil
}

// readBlobs reads the config and the layer of p, a manifest readManifest
// checked, from src, checks both against their descriptors and the layer
// against the config, unpacks it (giving opts.OnFile its files) and loads
// the plugin with opts.Load.
func (p *Plugin) readBlobs(ctx context.Context, src content.Fetcher, lim Limits, opts PullOptions) (*Plugin, error) {
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
		b, err := fetchVerified(ctx, src, p.LayerDescriptor, lim.Archive.MaxArchiveBytes, "MaxArchiveBytes")
		layerc <- blob{b, err}
	}()
	if err := p.readConfig(ctx, src, lim); err != nil {
		return nil, err
	}
	layer := <-layerc
	if layer.err != nil {
		return nil, fmt.Errorf("layer: %w", layer.err)
	}
	p.Layer = layer.b
	cfg := &p.PluginConfig
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
	switch {
	case c.Name != pkg.Name:
		return fmt.Errorf("%w: config name %q, plugin.json name %q", ErrConfig, c.Name, pkg.Name)
	case c.Version == nil && pkg.Version != "", c.Version != nil && c.PluginVersion() != pkg.Version:
		return fmt.Errorf("%w: config version %s, plugin.json version %q", ErrConfig, quoteOrNull(c.Version), pkg.Version)
	case c.PluginSchema != pluginSchema(pkg):
		return fmt.Errorf("%w: config pluginSchema %q, plugin.json $schema %q", ErrConfig, c.PluginSchema, pluginSchema(pkg))
	}
	return nil
}

// PluginVersion is the version the config gives, "" for null (as
// agentplugin.Package.Version is for a plugin.json without one).
func (c *Config) PluginVersion() string {
	if c.Version == nil {
		return ""
	}
	return *c.Version
}

func quoteOrNull(s *string) string {
	if s == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *s)
}
