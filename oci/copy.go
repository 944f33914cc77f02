package oci

import (
	"cmp"
	"context"
	"slices"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
)

// GraphSource is a Source that can also list the referrers of a manifest:
// a *Repository or a *Layout (oras-go's ReadOnlyGraphTarget).
type GraphSource interface {
	content.ReadOnlyGraphStorage
	content.Resolver
}

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
	// The checked blobs go from memory; the referrers are copied by
	// copyReferrers, which skips what dst has already.
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
func copyReferrers(ctx context.Context, src GraphSource, dst copyDst, node ocispec.Descriptor) ([]ocispec.Descriptor, error) {
	return newGraphCopy(src, dst, copyConcurrency).copyReferrers(ctx, node)
}

// byDigest sorts descs by digest, each digest once.
func byDigest(descs []ocispec.Descriptor) []ocispec.Descriptor {
	slices.SortFunc(descs, func(a, b ocispec.Descriptor) int { return cmp.Compare(a.Digest, b.Digest) })
	return slices.CompactFunc(descs, func(a, b ocispec.Descriptor) bool { return a.Digest == b.Digest })
}
