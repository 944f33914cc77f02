package oci

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// marshalIndex writes a layout's index.json with its manifests sorted
// (see sortIndex).
func marshalIndex(manifests []ocispec.Descriptor) ([]byte, error) {
	var b bytes.Buffer
	if err := writeIndex(&b, sortIndex(slices.Clone(manifests))); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// indexHead and indexTail enclose the manifests of an index.json, as
// marshal gives an ocispec.Index of schemaVersion 2 and indexMediaType.
const (
	indexHead = `{"schemaVersion":2,"mediaType":"` + indexMediaType + `","manifests":[`
	indexTail = `]}`
)

// writeIndex writes the index.json that lists manifests, in their order,
// to w: the bytes marshal gives the ocispec.Index, one manifest encoded at
// a time. marshal encodes the whole document into a buffer grown by
// doubling, and copies it: for an index of 2,000 entries, three times its
// size in memory at once (TestLayoutWriteFanOutCostsItsSize).
func writeIndex(w io.Writer, manifests []ocispec.Descriptor) error {
	bw := bufio.NewWriter(w)
	var entry bytes.Buffer
	enc := json.NewEncoder(&entry)
	enc.SetEscapeHTML(false)
	bw.WriteString(indexHead)
	for i, d := range manifests {
		if i > 0 {
			bw.WriteByte(',')
		}
		entry.Reset()
		if err := enc.Encode(d); err != nil {
			return fmt.Errorf("oci: %w", err)
		}
		bw.Write(bytes.TrimSuffix(entry.Bytes(), []byte("\n"))) // as marshal trims it
	}
	bw.WriteString(indexTail)
	return bw.Flush()
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
