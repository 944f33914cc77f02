package oci

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
)

// GraphSource is a Source that can also list the referrers of a manifest:
// a *Repository or a *Layout.
type GraphSource = oras.ReadOnlyGraphTarget

// Copied is what Copy and Export carried: the plugin, checked as Pull
// checks it, and every referrer found above it (signatures, attestations,
// and their own referrers), sorted by digest.
type Copied struct {
	Plugin    *Plugin
	Referrers []ocispec.Descriptor
}

// Copy reads the plugin sel names in src (refusing what Pull refuses),
// writes it to dst tagged tag (when not empty), and then copies every
// manifest whose subject is the plugin or, transitively, one of those
// referrers, with their blobs. Digests are unchanged.
func Copy(ctx context.Context, src GraphSource, sel string, dst Target, tag string, opts PullOptions) (*Copied, error) {
	p, err := Pull(ctx, src, sel, opts)
	if err != nil {
		return nil, err
	}
	return CopyPulled(ctx, src, p, dst, tag)
}

// CopyPulled is Copy of a plugin Pull has already read and checked from
// src: a caller that must not create dst before the plugin is known good
// (a new layout directory) pulls first, then opens dst.
func CopyPulled(ctx context.Context, src GraphSource, p *Plugin, dst Target, tag string) (*Copied, error) {
	// The checked blobs go from memory; the referrers are copied by oras,
	// which skips what dst has already.
	if _, err := Push(ctx, dst, &p.Artifact, tag); err != nil {
		return nil, err
	}
	refs, err := copyReferrers(ctx, src, dst, p.Descriptor)
	if err != nil {
		return nil, err
	}
	return &Copied{Plugin: p, Referrers: refs}, nil
}

// copyReferrers copies the referrers above node and returns their
// descriptors, sorted by digest.
func copyReferrers(ctx context.Context, src GraphSource, dst Target, node ocispec.Descriptor) ([]ocispec.Descriptor, error) {
	var mu sync.Mutex
	var found []ocispec.Descriptor
	opts := oras.ExtendedCopyGraphOptions{
		CopyGraphOptions: oras.CopyGraphOptions{FindSuccessors: successorsIn(src)},
		FindPredecessors: func(ctx context.Context, s content.ReadOnlyGraphStorage, desc ocispec.Descriptor) ([]ocispec.Descriptor, error) {
			refs, err := referrersOf(ctx, s, desc)
			mu.Lock()
			found = append(found, refs...)
			mu.Unlock()
			return refs, err
		},
	}
	if err := oras.ExtendedCopyGraph(ctx, src, dst, node, opts); err != nil {
		return nil, fmt.Errorf("copy referrers of %s: %w", node.Digest, err)
	}
	return byDigest(found), nil
}

// byDigest sorts descs by digest, each digest once.
func byDigest(descs []ocispec.Descriptor) []ocispec.Descriptor {
	slices.SortFunc(descs, func(a, b ocispec.Descriptor) int { return cmp.Compare(a.Digest, b.Digest) })
	return slices.CompactFunc(descs, func(a, b ocispec.Descriptor) bool { return a.Digest == b.Digest })
}

// referrersOf keeps, of the predecessors src knows of desc, the manifests
// whose subject is desc: in a layout, an index that merely lists desc is a
// predecessor too, and is not carried along.
func referrersOf(ctx context.Context, src content.ReadOnlyGraphStorage, desc ocispec.Descriptor) ([]ocispec.Descriptor, error) {
	preds, err := src.Predecessors(ctx, desc)
	if err != nil {
		return nil, err
	}
	var out []ocispec.Descriptor
	for _, p := range preds {
		if !isManifestType(p.MediaType) {
			continue
		}
		b, err := fetchVerified(ctx, src, p, DefaultMaxManifestBytes, "MaxManifestBytes")
		if err != nil {
			return nil, fmt.Errorf("referrer %s: %w", p.Digest, err)
		}
		var m referrerDoc
		if strictDecode(heldManifest(src, p.Digest), b, &m, (*manifestFields).referrerDoc) != nil || m.Subject == nil || m.Subject.Digest != desc.Digest {
			continue
		}
		if p.ArtifactType == "" { // as the referrers API reports it
			p.ArtifactType = m.ArtifactType
			if p.ArtifactType == "" {
				p.ArtifactType = m.Config.MediaType
			}
		}
		out = append(out, p)
	}
	return out, nil
}
