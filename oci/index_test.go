package oci

import (
	"bytes"
	"testing"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// writeIndex, one entry at a time, writes exactly the bytes marshal gives
// the whole ocispec.Index: none, one and several entries, with the
// characters marshal would escape as HTML (it does not), and the ones it
// must escape.
func TestWriteIndexIsMarshal(t *testing.T) {
	d := func(s string, ann map[string]string) ocispec.Descriptor {
		return ocispec.Descriptor{MediaType: ManifestMediaType, Digest: digest.FromString(s), Size: int64(len(s)), Annotations: ann}
	}
	for _, ms := range [][]ocispec.Descriptor{
		nil,
		{d("a", nil)},
		{d("a", map[string]string{annotationRefName: "v1 <&> \"q\" \u2028 \x01 é"}), d("b", nil),
			{MediaType: indexMediaType, Digest: digest.FromString("c"), Size: 3, ArtifactType: "x/y", URLs: []string{"https://a/b?c&d"}, Data: []byte{0, 1},
				Platform: &ocispec.Platform{OS: "linux", Architecture: "amd64", OSFeatures: []string{"f"}}}},
	} {
		want, err := marshal(ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: indexMediaType, Manifests: append([]ocispec.Descriptor{}, ms...)})
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := writeIndex(&got, ms); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%d entries:\n got %s\nwant %s", len(ms), got.Bytes(), want)
		}
	}
}
