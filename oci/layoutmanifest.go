package oci

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/plugkit/plugkit/internal/jsontree"
)

// layoutManifest is a manifest or index of a layout opened for reading,
// decoded once for all its readers: the layout's graph, Resolve's
// candidates, readManifest, referrersOf and oras-go's copy each decoded it
// again (an export decoded every referrer three to four times, the most
// of its CPU time after start-up).
type layoutManifest struct {
	raw []byte // checked against its digest when the layout was opened
	// fields is raw decoded by json.Unmarshal, and fieldsErr its error.
	// Where it is nil, every reader's own subset of the fields decodes
	// as fields holds it; where not, a reader decodes raw itself, as
	// before, so that a malformed field fails exactly the readers that
	// read it.
	fields    manifestFields
	fieldsErr error
	strict    sync.Once
	strictErr error // jsontree.Parse's verdict on raw, once asked for
}

// manifestFields are the fields of a manifest or index any reader in this
// package or oras-go reads, with the same types, so that decoding into it
// gives each field what decoding into the reader's own type gives; but
// for two, left as they are in the document: the annotations, decoded
// by the readers that read them (a layout's graph does not: a manifest of
// 1 MiB of annotations cost their size again in memory), and the
// manifests, which only an index lists.
type manifestFields struct {
	manifestHead
	Manifests   heldJSON             `json:"manifests"`
	Blobs       []ocispec.Descriptor `json:"blobs"`
	Subject     *ocispec.Descriptor  `json:"subject"`
	Annotations heldJSON             `json:"annotations"`
}

// heldJSON is a member's value left undecoded: where it lies in the
// document (which is never modified: a slice of it, not a copy), and how
// many members gave it (encoding/json matches names without regard to
// case, and merges what several give into one map).
type heldJSON struct {
	raw []byte // nil when absent; null when null
	n   int
}

func (h *heldJSON) UnmarshalJSON(b []byte) error {
	h.raw, h.n = b, h.n+1
	return nil
}

// annotations decodes h as a map[string]string member, as decoding the
// whole document into a type with such a member would; ok is false when
// it would give an error or merge several members.
func (h heldJSON) annotations() (a map[string]string, ok bool) {
	switch {
	case h.raw == nil:
		return nil, true
	case h.n > 1:
		return nil, false
	}
	return a, json.Unmarshal(h.raw, &a) == nil
}

func newLayoutManifest(raw []byte) *layoutManifest {
	m := &layoutManifest{raw: raw}
	m.fieldsErr = json.Unmarshal(raw, &m.fields)
	return m
}

// checkStrict is the error strictJSON's check gives raw, found once.
func (m *layoutManifest) checkStrict() error {
	m.strict.Do(func() { _, m.strictErr = jsontree.Parse(m.raw, maxJSONDepth) })
	return m.strictErr
}

// heldManifest is the manifest d of src decoded, when src is a layout
// opened for reading that holds it; else nil.
func heldManifest(src any, d digest.Digest) *layoutManifest {
	h, ok := src.(interface {
		manifest(digest.Digest) *layoutManifest
	})
	if !ok {
		return nil
	}
	return h.manifest(d)
}

// strictDecode is strictJSON(b, v), taken from the fields of held (the
// same content, held decoded by a layout; or nil) through view when they
// give it.
func strictDecode[T any](held *layoutManifest, b []byte, v *T, view func(*manifestFields) (T, bool)) error {
	if held != nil {
		if err := held.checkStrict(); err != nil {
			return err
		}
		if held.fieldsErr == nil {
			if d, ok := view(&held.fields); ok {
				*v = d
				return nil
			}
		}
	}
	return strictJSON(b, v)
}

// manifestDoc is the view of the fields readManifest and candidates read;
// each reader gets its own slices and maps, as from a decoding of its own.
func (f *manifestFields) manifestDoc() (manifestDoc, bool) {
	a, ok := f.Annotations.annotations()
	head := f.manifestHead
	head.Config, head.Layers = cloneDescriptor(f.Config), cloneDescriptors(f.Layers)
	return manifestDoc{manifestHead: head, Manifests: json.RawMessage(f.Manifests.raw), Annotations: a}, ok
}

// referrerDoc is what referrersOf reads of a manifest.
type referrerDoc struct {
	ArtifactType string              `json:"artifactType"`
	Config       ocispec.Descriptor  `json:"config"`
	Subject      *ocispec.Descriptor `json:"subject"`
}

func (f *manifestFields) referrerDoc() (referrerDoc, bool) {
	d := referrerDoc{ArtifactType: f.ArtifactType, Config: cloneDescriptor(f.Config)}
	if f.Subject != nil {
		s := cloneDescriptor(*f.Subject)
		d.Subject = &s
	}
	return d, true
}

// graphSuccessors is what the layout's graph records m as listing,
// listedIn(m.raw), and whether m's fields gave it: an index's manifests,
// or a field that did not decode, leave it to listedIn.
func (m *layoutManifest) graphSuccessors() ([]ocispec.Descriptor, bool) {
	f := &m.fields
	if m.fieldsErr != nil || f.Manifests.raw != nil {
		return nil, false
	}
	succ := append(slices.Clip(f.Layers), f.Blobs...)
	if f.Config.Digest != "" {
		succ = append(succ, f.Config)
	}
	if f.Subject != nil {
		succ = append(succ, *f.Subject)
	}
	return succ, true
}

// successorsIn is oras-go's FindSuccessors for a copy from src: an image
// manifest src holds decoded gives content.Successors' answer from its
// fields; anything else is content.Successors' to find, through fetcher.
func successorsIn(src any) func(context.Context, content.Fetcher, ocispec.Descriptor) ([]ocispec.Descriptor, error) {
	return func(ctx context.Context, fetcher content.Fetcher, desc ocispec.Descriptor) ([]ocispec.Descriptor, error) {
		m := heldManifest(src, desc.Digest)
		if m == nil || desc.MediaType != ocispec.MediaTypeImageManifest || m.fieldsErr != nil || int64(len(m.raw)) != desc.Size {
			return content.Successors(ctx, fetcher, desc)
		}
		if _, ok := m.fields.Annotations.annotations(); !ok { // an error for content.Successors to give
			return content.Successors(ctx, fetcher, desc)
		}
		var nodes []ocispec.Descriptor
		if m.fields.Subject != nil {
			nodes = append(nodes, cloneDescriptor(*m.fields.Subject))
		}
		nodes = append(nodes, cloneDescriptor(m.fields.Config))
		for _, l := range m.fields.Layers {
			nodes = append(nodes, cloneDescriptor(l))
		}
		return nodes, nil
	}
}

// cloneDescriptor is d with slices and maps of its own.
func cloneDescriptor(d ocispec.Descriptor) ocispec.Descriptor {
	d.URLs = slices.Clone(d.URLs)
	d.Annotations = maps.Clone(d.Annotations)
	d.Data = slices.Clone(d.Data)
	if d.Platform != nil {
		p := *d.Platform
		p.OSFeatures = slices.Clone(p.OSFeatures)
		d.Platform = &p
	}
	return d
}

func cloneDescriptors(ds []ocispec.Descriptor) []ocispec.Descriptor {
	if ds == nil {
		return nil
	}
	out := make([]ocispec.Descriptor, len(ds))
	for i, d := range ds {
		out[i] = cloneDescriptor(d)
	}
	return out
}
