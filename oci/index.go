package oci

import (
	"cmp"
	"slices"

	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// marshalIndex writes a layout's index.json with its manifests sorted
// (see sortIndex).
func marshalIndex(manifests []ocispec.Descriptor) ([]byte, error) {
	ms := sortIndex(slices.Clone(manifests))
	if ms == nil {
		ms = []ocispec.Descriptor{}
	}
	return marshal(ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: indexMediaType, Manifests: ms})
}

// sortIndex sorts the entries of an index.json: tagged entries by name,
// then untagged ones by digest (then by media type, so that equal content
// always gives equal bytes).
func sortIndex(ms []ocispec.Descriptor) []ocispec.Descriptor {
	slices.SortStableFunc(ms, func(a, b ocispec.Descriptor) int {
		an, bn := a.Annotations[annotationRefName], b.Annotations[annotationRefName]
		if (an == "") != (bn == "") {
			if an == "" {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(an, bn), cmp.Compare(a.Digest, b.Digest), cmp.Compare(a.MediaType, b.MediaType))
	})
	return ms
}
