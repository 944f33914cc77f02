package oci

import (
	"errors"
	"testing"
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
