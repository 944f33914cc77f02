package oci_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/oci"
	"github.com/plugkit/plugkit/snapshot"
)

const exampleDir = "../examples/release-notes"

// examplePackage loads examples/release-notes, the plugin of the golden
// files.
func examplePackage(t testing.TB) *agentplugin.Package {
	t.Helper()
	pkg, err := agentplugin.LoadDir(exampleDir, agentplugin.Options{Read: snapshot.Options{Strict: true}})
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

// exampleArtifact is examples/release-notes built as an artifact.
func exampleArtifact(t testing.TB) *oci.Artifact {
	t.Helper()
	a, err := oci.Build(examplePackage(t), oci.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// layoutBuilder writes an OCI layout by hand, lies included: a blob's
// file name need not be its digest, and descriptors say what the test
// wants.
type layoutBuilder struct {
	t     testing.TB
	dir   string
	index []ocispec.Descriptor
}

func newLayout(t testing.TB) *layoutBuilder {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "blobs", "sha256"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644)
	return &layoutBuilder{t: t, dir: dir}
}

// blob stores b under its digest and returns its true descriptor.
func (l *layoutBuilder) blob(mediaType string, b []byte) ocispec.Descriptor {
	d := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(b), Size: int64(len(b))}
	l.blobAt(d.Digest, b)
	return d
}

// blobAt stores b under the name of digest d, whatever b hashes to.
func (l *layoutBuilder) blobAt(d digest.Digest, b []byte) {
	if err := os.WriteFile(filepath.Join(l.dir, "blobs", "sha256", d.Encoded()), b, 0o644); err != nil {
		l.t.Fatal(err)
	}
}

// manifest stores v as JSON and lists it in index.json under tag (none
// when empty).
func (l *layoutBuilder) manifest(mediaType string, v any, tag string) ocispec.Descriptor {
	b, ok := v.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(v); err != nil {
			l.t.Fatal(err)
		}
	}
	d := l.blob(mediaType, b)
	e := d
	if tag != "" {
		e.Annotations = map[string]string{ocispec.AnnotationRefName: tag}
	}
	l.index = append(l.index, e)
	return d
}

// open writes index.json and opens the layout for reading.
func (l *layoutBuilder) open() *oci.Layout {
	l.t.Helper()
	lay, err := l.tryOpen()
	if err != nil {
		l.t.Fatal(err)
	}
	return lay
}

func (l *layoutBuilder) tryOpen() (*oci.Layout, error) {
	b, _ := json.Marshal(ocispec.Index{Versioned: specsV2, Manifests: l.index})
	if err := os.WriteFile(filepath.Join(l.dir, "index.json"), b, 0o644); err != nil {
		l.t.Fatal(err)
	}
	return oci.OpenLayout(context.Background(), l.dir, false)
}

// pluginManifest is the profile's manifest of config and layers, as a map
// a test can break.
func pluginManifest(config ocispec.Descriptor, layers ...ocispec.Descriptor) map[string]any {
	return map[string]any{
		"schemaVersion": 2,
		"mediaType":     oci.ManifestMediaType,
		"artifactType":  oci.ArtifactType,
		"config":        config,
		"layers":        layers,
	}
}

// configJSON is a plugin config document.
func configJSON(name string, version any, schema string) []byte {
	b, _ := json.Marshal(map[string]any{"schemaVersion": 1, "name": name, "version": version, "pluginSchema": schema})
	return b
}

// mustPush pushes a into dst under tag.
func mustPush(t testing.TB, dst oci.Target, a *oci.Artifact, tag string) ocispec.Descriptor {
	t.Helper()
	d, err := oci.Push(context.Background(), dst, a, tag)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func sameSnapshot(t testing.TB, got, want *snapshot.Snapshot) {
	t.Helper()
	if !got.Equal(want) {
		t.Fatalf("snapshots differ:\n got %v\nwant %v", got.Paths(), want.Paths())
	}
}

// specsV2 is the schemaVersion of manifests and indexes.
var specsV2 = specs.Versioned{SchemaVersion: 2}

func marshalJSON(v any) ([]byte, error) { return json.Marshal(v) }

func digestOf(b []byte) digest.Digest { return digest.FromBytes(b) }

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// manifestOnly builds the artifact of a plugin that is only its
// plugin.json.
func manifestOnly(t testing.TB, pluginJSON string) *oci.Artifact {
	t.Helper()
	return artifactOf(t, map[string][]byte{"plugin.json": []byte(pluginJSON)})
}

// artifactOf builds the artifact of the valid plugin of files.
func artifactOf(t testing.TB, files map[string][]byte) *oci.Artifact {
	t.Helper()
	s, err := snapshot.FromFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := agentplugin.Load(s, agentplugin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := oci.Build(pkg, oci.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// copyToLayout copies the plugin sel of src, with its referrers, into a
// new layout at dir under tag, and writes the layout's index.
func copyToLayout(t testing.TB, src oci.GraphSource, sel, dir, tag string) *oci.Copied {
	t.Helper()
	ctx := context.Background()
	dst, err := oci.OpenLayout(ctx, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	c, err := oci.Copy(ctx, src, sel, dst, tag, oci.PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return c
}
