package oci

import (
	"context"
	"errors"
	"fmt"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
)

// Source is what plugins are read from: a *Repository, a *Layout, or any
// oras-go target (oras.ReadOnlyTarget).
type Source interface {
	content.ReadOnlyStorage
	content.Resolver
}

// candidateLister is a source that knows every manifest it holds (a
// layout's index.json), so that a plugin can be found without a tag.
type candidateLister interface {
	candidates(ctx context.Context) ([]ocispec.Descriptor, error)
}

// Resolve finds the manifest a selector (TAG, @DIGEST, TAG@DIGEST, or ""
// for a layout) names in src. With both, the tag must point at the digest.
// In a layout the plugin candidates are the plugin manifests its index
// lists: with several, only a digest selects one (ErrAmbiguous, naming
// them); with one, a tag or nothing is enough.
func Resolve(ctx context.Context, src Source, selector string) (ocispec.Descriptor, error) {
	tag, dgst := splitSelector(selector)
	if cl, ok := src.(candidateLister); ok && dgst == "" {
		cands, err := cl.candidates(ctx)
		if err != nil {
			return ocispec.Descriptor{}, err
		}
		switch {
		case len(cands) > 1:
			return ocispec.Descriptor{}, fmt.Errorf("the layout lists %d plugin manifests (%s): %w", len(cands), describeAll(cands), ErrAmbiguous)
		case tag != "":
			// The tag decides; Pull judges what it names.
		case len(cands) == 0:
			return ocispec.Descriptor{}, fmt.Errorf("%w in the layout's index.json", ErrNoPlugin)
		default:
			return cands[0], nil
		}
	}
	if tag == "" && dgst == "" {
		return ocispec.Descriptor{}, fmt.Errorf("%w: give a tag or a digest", ErrReference)
	}
	ref := tag
	if dgst != "" {
		ref = dgst
	}
	desc, err := src.Resolve(ctx, ref)
	if err != nil {
		return ocispec.Descriptor{}, resolveError(ref, err)
	}
	if tag != "" && dgst != "" {
		td, err := src.Resolve(ctx, tag)
		if err != nil {
			return ocispec.Descriptor{}, resolveError(tag, err)
		}
		if td.Digest != desc.Digest {
			return ocispec.Descriptor{}, fmt.Errorf("%w: tag %s points at %s, not %s", ErrReference, tag, td.Digest, dgst)
		}
	}
	return desc, nil
}

func resolveError(ref string, err error) error {
	if errors.Is(err, errdef.ErrNotFound) {
		return fmt.Errorf("%w: nothing is named %s there", ErrNoPlugin, ref)
	}
	return fmt.Errorf("resolve %s: %w", ref, err)
}

// describeAll lists descriptors by digest and ref name for an error.
func describeAll(ds []ocispec.Descriptor) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.Digest.String()
		if name := d.Annotations[annotationRefName]; name != "" {
			parts[i] += " " + name
		}
	}
	return strings.Join(parts, ", ")
}
