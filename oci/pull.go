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
	"github.com/plugkit/plugkit/snapshot"
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
	// Stream unpacks the layer as it is fetched, hashing it on the way,
	// and holds neither the layer nor the bytes of the files the loader
	// does not read (agentplugin.ReadsContent): Plugin.Layer is nil, and
	// the Package's Snapshot lists every file and mode but holds nil data
	// for those. A caller that writes the files out through OnFile then
	// holds what it has not written yet rather than the layer and its
	// payload: on a machine where every new page of memory costs a fault,
	// those were a third of the time of a 30 MB pull.
	//
	// OnFile is then given each file before the layer's digest and size
	// are checked; a layer that is not its descriptor's content still fails
	// Pull (ErrDescriptor, whatever else is wrong with it), and what OnFile
	// did must be undone, as for any other refusal. The plugin is loaded
	// only from verified bytes.
	Stream bool
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
	layerc := make(chan fetchedLayer, 1)
	go func() { layerc <- p.fetchLayer(ctx, src, lim, opts.Stream) }()
	if err := p.readConfig(ctx, src, lim); err != nil {
		go func() { (<-layerc).close() }() // not waiting for a transfer being cancelled
		return nil, err
	}
	layer := <-layerc
	if layer.err != nil {
		return nil, fmt.Errorf("layer: %w", layer.err)
	}
	defer layer.close()
	uo := archive.UnpackOptions{Limits: lim.Archive, Root: p.PluginConfig.Name, GNUMagic: true, OnFile: opts.OnFile}
	var snap *snapshot.Snapshot
	var err error
	if opts.Stream {
		snap, err = streamLayer(layer.rc, p.LayerDescriptor, uo)
	} else {
		p.Layer = layer.b
		snap, err = archive.Unpack(p.Layer, uo)
	}
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	if p.Package, err = agentplugin.Load(snap, opts.Load); err != nil {
		return nil, err
	}
	if err := p.PluginConfig.check(p.Package); err != nil {
		return nil, err
	}
	return p, nil
}

// fetchedLayer is the layer as fetched: its verified bytes, or, to be
// streamed, the reader of its content.
type fetchedLayer struct {
	b   []byte
	rc  io.ReadCloser
	err error
}

func (l fetchedLayer) close() {
	if l.rc != nil {
		l.rc.Close()
	}
}

// fetchLayer fetches p's layer: read whole and verified, or only opened
// when stream is set.
func (p *Plugin) fetchLayer(ctx context.Context, src content.Fetcher, lim Limits, stream bool) fetchedLayer {
	if !stream {
		b, err := fetchVerified(ctx, src, p.LayerDescriptor, lim.Archive.MaxArchiveBytes, "MaxArchiveBytes")
		return fetchedLayer{b: b, err: err}
	}
	rc, err := src.Fetch(ctx, p.LayerDescriptor)
	if err != nil {
		err = fmt.Errorf("fetch %s: %w", p.LayerDescriptor.Digest, err)
	}
	return fetchedLayer{rc: rc, err: err}
}

// streamLayer unpacks the layer desc describes from r as it is read, with
// uo, holding only the data the loader reads (PullOptions.Stream). The
// content must be desc's: when it is not, that is the error, whatever
// else the unpacking found, so a refused unpacking reads the rest of the
// layer (at most desc.Size+1 bytes) to tell.
func streamLayer(r io.Reader, desc ocispec.Descriptor, uo archive.UnpackOptions) (*snapshot.Snapshot, error) {
	v := newVerifyReader(r, desc)
	held := map[string][]byte{}
	sink, onFileFailed := uo.OnFile, false
	uo.NoData = true
	uo.OnFile = func(path string, mode fs.FileMode, data []byte) error {
		if agentplugin.ReadsContent(path) {
			held[path] = data
		}
		if sink == nil {
			return nil
		}
		err := sink(path, mode, data)
		onFileFailed = err != nil
		return err
	}
	snap, err := archive.UnpackFrom(v, uo)
	if err != nil && !onFileFailed && !v.end {
		io.Copy(io.Discard, v) // its error, if any, is err's too; verdict decides
	}
	if err := v.verdict(err); err != nil {
		return nil, err
	}
	for path, data := range held {
		snap.Files[path] = data
	}
	return snap, nil
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
