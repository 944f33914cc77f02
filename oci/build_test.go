package oci_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/oci"
)

// The golden digests of testdata/cosign/README.md (made by other tools).
const (
	goldenManifest = "sha256:a81d6d7d5c9bda9cdce2f95911cca9442fda4c320501719949742448cb05d8b4"
	goldenConfig   = "sha256:1f95a51c67c1503a628fcc8d7e522afb854b25316997f3bbe5216a0bf945665e"
	goldenLayer    = "sha256:aacbf444f59df96afac9e3bdb1fd12272422218136dea3a3b2caba90911b2951"
	goldenReferrer = "sha256:aa3c08383987f74c193866f846b55b7dd0df58d12a6d11fb435a0d79fe1789f3"
)

// Build writes the Colossus profile exactly: the golden config and layer,
// and, but for the layer title annotation the golden files lack, the golden
// manifest byte for byte.
func TestBuildMatchesTheGoldenArtifact(t *testing.T) {
	a := exampleArtifact(t)
	if got := a.ConfigDescriptor.Digest.String(); got != goldenConfig {
		t.Errorf("config %s, golden %s: %s", got, goldenConfig, a.Config)
	}
	if got := a.LayerDescriptor.Digest.String(); got != goldenLayer {
		t.Errorf("layer %s, golden %s", got, goldenLayer)
	}
	want := `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.colossus.agent-plugin.v1","config":{"mediaType":"application/vnd.colossus.agent-plugin.config.v1+json","digest":"sha256:1f95a51c67c1503a628fcc8d7e522afb854b25316997f3bbe5216a0bf945665e","size":136},"layers":[{"mediaType":"application/vnd.colossus.agent-plugin.content.v1.tar+gzip","digest":"sha256:aacbf444f59df96afac9e3bdb1fd12272422218136dea3a3b2caba90911b2951","size":1385,"annotations":{"org.opencontainers.image.title":"release-notes.tar.gz"}}],"annotations":{"org.opencontainers.image.description":"Write release notes and check version bumps from a git history.","org.opencontainers.image.licenses":"Apache-2.0","org.opencontainers.image.title":"release-notes","org.opencontainers.image.version":"1.2.0"}}`
	if string(a.Manifest) != want {
		t.Errorf("manifest:\n%s\nwant\n%s", a.Manifest, want)
	}
	without := strings.Replace(string(a.Manifest), `,"annotations":{"org.opencontainers.image.title":"release-notes.tar.gz"}`, "", 1)
	if d := archive.Digest([]byte(without)); d != goldenManifest {
		t.Errorf("manifest without the layer title is %s, golden %s", d, goldenManifest)
	}
	if a.Descriptor.ArtifactType != oci.ArtifactType || a.Descriptor.MediaType != oci.ManifestMediaType || a.Descriptor.Size != int64(len(a.Manifest)) {
		t.Errorf("descriptor %+v", a.Descriptor)
	}
}

// The same plugin gives the same manifest digest whatever the order its
// files were read in and their times on disk; a created annotation appears
// only with SOURCE_DATE_EPOCH.
func TestBuildIsReproducible(t *testing.T) {
	first := exampleArtifact(t)
	// Another machine: the same files written in reverse order, other
	// mtimes, other umask-given modes (only the execute bit counts).
	dir := t.TempDir()
	pkg := examplePackage(t)
	paths := pkg.Snapshot.Paths()
	for i := len(paths) - 1; i >= 0; i-- {
		p := paths[i]
		full := dir + "/" + p
		os.MkdirAll(full[:strings.LastIndexByte(full, '/')], 0o700)
		mode := fs.FileMode(0o600)
		if pkg.Snapshot.Mode(p)&0o111 != 0 {
			mode = 0o700
		}
		if err := os.WriteFile(full, pkg.Snapshot.Files[p], mode); err != nil {
			t.Fatal(err)
		}
	}
	pkg2, err := agentplugin.LoadDir(dir, agentplugin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := oci.Build(pkg2, oci.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if first.Descriptor.Digest != second.Descriptor.Digest || !bytes.Equal(first.Layer, second.Layer) {
		t.Fatalf("digests differ: %s, %s", first.Descriptor.Digest, second.Descriptor.Digest)
	}

	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	created, err := oci.SourceDateEpoch()
	if err != nil {
		t.Fatal(err)
	}
	dated, _ := oci.Build(pkg, oci.BuildOptions{Created: created})
	if dated.Annotations["org.opencontainers.image.created"] != "2023-11-14T22:13:20Z" {
		t.Errorf("created = %q", dated.Annotations["org.opencontainers.image.created"])
	}
	if _, ok := first.Annotations["org.opencontainers.image.created"]; ok {
		t.Error("created annotation without SOURCE_DATE_EPOCH")
	}
	for _, bad := range []string{"-1", "soon", "1.5"} {
		t.Setenv("SOURCE_DATE_EPOCH", bad)
		if _, err := oci.SourceDateEpoch(); err == nil {
			t.Errorf("SOURCE_DATE_EPOCH=%s accepted", bad)
		}
	}
}

// Annotations come from plugin.json where present; a plugin without a
// version has a null config version.
func TestBuildAnnotationsAndNullVersion(t *testing.T) {
	a := manifestOnly(t, `{"$schema":"`+schema+`","name":"bare","repository":"https://example.com/bare.git"}`)
	want := map[string]string{"org.opencontainers.image.title": "bare", "org.opencontainers.image.source": "https://example.com/bare.git"}
	if !maps.Equal(a.Annotations, want) {
		t.Errorf("annotations %v", a.Annotations)
	}
	var cfg map[string]any
	json.Unmarshal(a.Config, &cfg)
	if v, ok := cfg["version"]; !ok || v != nil {
		t.Errorf("config %s: want version null", a.Config)
	}
}
