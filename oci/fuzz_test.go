package oci

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
)

// FuzzParseReference: never a panic; an accepted reference prints as
// something that parses back to itself.
func FuzzParseReference(f *testing.F) {
	for _, s := range []string{
		"oci://127.0.0.1:5000/plugins/kv:1.0", "oci://ghcr.io/a/b@sha256:" + hex64, "oci://h/r:t@sha256:" + hex64,
		"oci-layout:dir:1.0", "oci-layout:air.tar@sha256:" + hex64, "oci-layout:dir:with/colon", "oci-layout:", "oci://", "oci://Up/Per",
		"oci://h/r:bad tag", "oci-layout:C:\\x", "oci-layout:a@b@sha256:" + hex64,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseReference(s)
		if err != nil {
			if !errors.Is(err, ErrReference) {
				t.Fatalf("error %v is not ErrReference", err)
			}
			return
		}
		back, err := ParseReference(r.String())
		if err != nil || back != r {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, r, r.String(), back, err)
		}
	})
}

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// FuzzParseManifest: the manifest and config parsers never panic, fail
// only with the profile's errors, and accept only what the profile allows.
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.colossus.agent-plugin.v1","config":{"mediaType":"application/vnd.colossus.agent-plugin.config.v1+json","digest":"sha256:1f95a51c67c1503a628fcc8d7e522afb854b25316997f3bbe5216a0bf945665e","size":136},"layers":[{"mediaType":"application/vnd.colossus.agent-plugin.content.v1.tar+gzip","digest":"sha256:aacbf444f59df96afac9e3bdb1fd12272422218136dea3a3b2caba90911b2951","size":1385}]}`))
	f.Add([]byte(`{"schemaVersion":1,"name":"release-notes","version":"1.2.0","pluginSchema":"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json"}`))
	f.Add([]byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}`))
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := parseManifest(b); err == nil {
			if m.MediaType != ManifestMediaType || m.ArtifactType != ArtifactType || len(m.Layers) != 1 ||
				m.Layers[0].MediaType != LayerMediaType || m.Config.MediaType != ConfigMediaType {
				t.Fatalf("accepted %+v", m)
			}
		} else if !errors.Is(err, ErrNotPlugin) && !errors.Is(err, ErrIndex) {
			t.Fatalf("manifest error %v", err)
		}
		if c, err := parseConfig(b); err == nil {
			if c.SchemaVersion != 1 || c.Name == "" {
				t.Fatalf("accepted config %+v", c)
			}
		} else if !errors.Is(err, ErrConfig) {
			t.Fatalf("config error %v", err)
		}
	})
}

// FuzzHeldManifest: a manifest a layout holds decoded once reads, for
// every reader, as the same bytes decoded by that reader: the same
// document or the same error from parseManifest and referrersOf's strict
// decoding, the same graph edges, the same successors from oras-go's copy.
func FuzzHeldManifest(f *testing.F) {
	for _, s := range []string{
		`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.colossus.agent-plugin.v1","config":{"mediaType":"application/vnd.colossus.agent-plugin.config.v1+json","digest":"sha256:1f95a51c67c1503a628fcc8d7e522afb854b25316997f3bbe5216a0bf945665e","size":136},"layers":[{"mediaType":"application/vnd.colossus.agent-plugin.content.v1.tar+gzip","digest":"sha256:aacbf444f59df96afac9e3bdb1fd12272422218136dea3a3b2caba90911b2951","size":1385,"annotations":{"org.opencontainers.image.title":"a.tar.gz"}}],"annotations":{"org.opencontainers.image.title":"a"}}`,
		`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.example.signature","config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2},"layers":[],"subject":{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:` + hex64 + `","size":721},"annotations":{"org.opencontainers.image.created":"2026-01-01T00:00:00Z"}}`,
		`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"digest":"sha256:` + hex64 + `","size":1}]}`,
		`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.colossus.agent-plugin.v1","config":{"mediaType":"application/vnd.colossus.agent-plugin.config.v1+json","digest":"sha256:` + hex64 + `","size":136},"layers":[{"mediaType":"application/vnd.colossus.agent-plugin.content.v1.tar+gzip","digest":"sha256:` + hex64 + `","size":1}],"annotations":{"a":"1"},"Annotations":{"b":"2"}}`,
		`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"digest":"sha256:` + hex64 + `","size":2},"subject":{"digest":"sha256:` + hex64 + `","size":1},"annotations":{"a":1}}`,
		`{"manifests":null,"layers":null}`, `{"annotations":{"a":"1"},"Annotations":{"b":"2"}}`, `{"annotations":{"a":1}}`,
		`{"annotations":null,"subject":null}`, `{"layers":5,"subject":{}}`, `{"schemaVersion":"2"}`, `{"blobs":[{"size":1}],"config":{"digest":"x"}}`,
		`{"Config":{"size":1},"config":{"digest":"d"}}`, `{"layers":[{"platform":{"os":"linux","os.features":["a"]},"urls":["u"],"data":"AA=="}]}`,
		`null`, `[]`, `{"a":1,"a":2}`, `{"manifests":[1]}`, `{"manifests":[],"Manifests":[1]}`,
	} {
		f.Add([]byte(s))
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, b []byte) {
		held := newLayoutManifest(b)
		m1, err1 := parseManifest(b)
		m2, err2 := parseHeldManifest(held, b)
		if fmt.Sprint(err1) != fmt.Sprint(err2) || !reflect.DeepEqual(m1, m2) {
			t.Fatalf("parseManifest: %+v, %v\nheld: %+v, %v", m1, err1, m2, err2)
		}
		var r1, r2 referrerDoc
		err1 = strictJSON(b, &r1)
		err2 = strictDecode(held, b, &r2, (*manifestFields).referrerDoc)
		if fmt.Sprint(err1) != fmt.Sprint(err2) || err1 == nil && !reflect.DeepEqual(r1, r2) {
			t.Fatalf("referrer: %+v, %v\nheld: %+v, %v", r1, err1, r2, err2)
		}
		if succ, ok := held.graphSuccessors(); ok && !reflect.DeepEqual(succ, listedIn(b)) {
			t.Fatalf("graph: %+v\nheld: %+v", listedIn(b), succ)
		}
		src := heldManifests{digest.FromBytes(b): held}
		for _, mt := range []string{ManifestMediaType, indexMediaType} {
			desc := ocispec.Descriptor{MediaType: mt, Digest: digest.FromBytes(b), Size: int64(len(b))}
			s1, err1 := content.Successors(ctx, src, desc)
			s2, err2 := successorsIn(src)(ctx, src, desc)
			if fmt.Sprint(err1) != fmt.Sprint(err2) || !reflect.DeepEqual(s1, s2) {
				t.Fatalf("%s successors: %+v, %v\nheld: %+v, %v", mt, s1, err1, s2, err2)
			}
		}
	})
}

// heldManifests are manifests held decoded, as a layout holds them, and
// a Fetcher of their bytes.
type heldManifests map[digest.Digest]*layoutManifest

func (h heldManifests) manifest(d digest.Digest) *layoutManifest { return h[d] }

func (h heldManifests) Fetch(_ context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(h[desc.Digest].raw)), nil
}
