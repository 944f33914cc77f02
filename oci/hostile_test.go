package oci_test

import (
	"context"
	"errors"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/oci"
	"github.com/plugkit/plugkit/snapshot"
)

const schema = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json"

// hostile is one hand-made artifact Pull must refuse.
type hostile struct {
	name  string
	build func(l *layoutBuilder, a *oci.Artifact) // stores the artifact and tags it "x"
	want  error
	opts  oci.PullOptions
}

// goodBlobs stores the example's config and layer and returns their
// descriptors.
func goodBlobs(l *layoutBuilder, a *oci.Artifact) (cfg, layer ocispec.Descriptor) {
	return l.blob(oci.ConfigMediaType, a.Config), l.blob(oci.LayerMediaType, a.Layer)
}

// withLayer is a valid manifest around another layer (and a matching
// config for name).
func withLayer(l *layoutBuilder, name string, layer []byte) {
	cfg := l.blob(oci.ConfigMediaType, configJSON(name, "1.2.0", schema))
	l.manifest(oci.ManifestMediaType, pluginManifest(cfg, l.blob(oci.LayerMediaType, layer)), "x")
}

// packed packs files under root.
func packed(t testing.TB, files map[string][]byte, root string) []byte {
	s, err := snapshot.FromFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	b, err := archive.Pack(s, archive.PackOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hostileArtifacts(t *testing.T) []hostile {
	manifest := func(edit func(m map[string]any)) func(l *layoutBuilder, a *oci.Artifact) {
		return func(l *layoutBuilder, a *oci.Artifact) {
			cfg, layer := goodBlobs(l, a)
			m := pluginManifest(cfg, layer)
			edit(m)
			l.manifest(oci.ManifestMediaType, m, "x")
		}
	}
	config := func(doc []byte) func(l *layoutBuilder, a *oci.Artifact) {
		return func(l *layoutBuilder, a *oci.Artifact) {
			_, layer := goodBlobs(l, a)
			l.manifest(oci.ManifestMediaType, pluginManifest(l.blob(oci.ConfigMediaType, doc), layer), "x")
		}
	}
	exampleFiles := examplePackage(t).Snapshot.Files
	return []hostile{
		{"image index", func(l *layoutBuilder, a *oci.Artifact) {
			cfg, layer := goodBlobs(l, a)
			m := l.blob(oci.ManifestMediaType, mustJSON(pluginManifest(cfg, layer)))
			l.manifest("application/vnd.oci.image.index.v1+json", ocispec.Index{Versioned: specsV2, MediaType: "application/vnd.oci.image.index.v1+json", Manifests: []ocispec.Descriptor{m}}, "x")
		}, oci.ErrIndex, oci.PullOptions{}},
		{"Docker manifest list", func(l *layoutBuilder, a *oci.Artifact) {
			l.manifest("application/vnd.docker.distribution.manifest.list.v2+json", map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.list.v2+json", "manifests": []any{}}, "x")
		}, oci.ErrIndex, oci.PullOptions{}},
		{"index content under a manifest media type", func(l *layoutBuilder, a *oci.Artifact) {
			l.manifest(oci.ManifestMediaType, map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": []any{}}, "x")
		}, oci.ErrIndex, oci.PullOptions{}},
		{"Docker image manifest", manifest(func(m map[string]any) { m["mediaType"] = "application/vnd.docker.distribution.manifest.v2+json" }), oci.ErrNotPlugin, oci.PullOptions{}},
		{"no artifactType", manifest(func(m map[string]any) { delete(m, "artifactType") }), oci.ErrNotPlugin, oci.PullOptions{}},
		{"another artifactType", manifest(func(m map[string]any) { m["artifactType"] = "application/vnd.example.other" }), oci.ErrNotPlugin, oci.PullOptions{}},
		{"schemaVersion 1", manifest(func(m map[string]any) { m["schemaVersion"] = 1 }), oci.ErrNotPlugin, oci.PullOptions{}},
		{"two layers", manifest(func(m map[string]any) {
			ls := m["layers"].([]ocispec.Descriptor)
			m["layers"] = append(ls, ls[0])
		}), oci.ErrNotPlugin, oci.PullOptions{}},
		{"no layer", manifest(func(m map[string]any) { m["layers"] = []ocispec.Descriptor{} }), oci.ErrNotPlugin, oci.PullOptions{}},
		{"layer of another type", manifest(func(m map[string]any) {
			ls := m["layers"].([]ocispec.Descriptor)
			ls[0].MediaType = "application/vnd.oci.image.layer.v1.tar+gzip"
		}), oci.ErrNotPlugin, oci.PullOptions{}},
		{"config of another type", manifest(func(m map[string]any) {
			c := m["config"].(ocispec.Descriptor)
			c.MediaType = "application/vnd.oci.empty.v1+json"
			m["config"] = c
		}), oci.ErrNotPlugin, oci.PullOptions{}},
		{"duplicate artifactType key", func(l *layoutBuilder, a *oci.Artifact) {
			goodBlobs(l, a)
			dup := strings.Replace(string(a.Manifest), `"artifactType":`, `"artifactType":"application/vnd.example.other","artifactType":`, 1)
			l.manifest(oci.ManifestMediaType, []byte(dup), "x")
		}, oci.ErrNotPlugin, oci.PullOptions{}},
		{"config size lie", manifest(func(m map[string]any) {
			c := m["config"].(ocispec.Descriptor)
			c.Size--
			m["config"] = c
		}), oci.ErrDescriptor, oci.PullOptions{}},
		{"layer size lie", manifest(func(m map[string]any) { m["layers"].([]ocispec.Descriptor)[0].Size += 10 }), oci.ErrDescriptor, oci.PullOptions{}},
		{"layer digest lie", func(l *layoutBuilder, a *oci.Artifact) {
			cfg, layer := goodBlobs(l, a)
			evil := packed(t, map[string][]byte{"plugin.json": exampleFiles["plugin.json"]}, "release-notes")
			l.blobAt(layer.Digest, sameSize(evil, len(a.Layer)))
			l.manifest(oci.ManifestMediaType, pluginManifest(cfg, layer), "x")
		}, oci.ErrDescriptor, oci.PullOptions{}},
		// Streamed, the layer is unpacked before its digest is known; a
		// lie is still the error, whatever the lying bytes hold.
		{"layer digest lie holding a link", func(l *layoutBuilder, a *oci.Artifact) {
			cfg, layer := goodBlobs(l, a)
			l.blobAt(layer.Digest, sameSize(gnuTarLink(t), len(a.Layer)))
			l.manifest(oci.ManifestMediaType, pluginManifest(cfg, layer), "x")
		}, oci.ErrDescriptor, oci.PullOptions{}},
		{"layer digest lie holding a rejected plugin", func(l *layoutBuilder, a *oci.Artifact) {
			cfg, layer := goodBlobs(l, a)
			evil := packed(t, map[string][]byte{"plugin.json": []byte(`{"name":"release-notes"}`)}, "release-notes")
			l.blobAt(layer.Digest, sameSize(evil, len(a.Layer)))
			l.manifest(oci.ManifestMediaType, pluginManifest(cfg, layer), "x")
		}, oci.ErrDescriptor, oci.PullOptions{}},
		{"layer size lie over a smaller layer", manifest(func(m map[string]any) { m["layers"].([]ocispec.Descriptor)[0].Size -= 10 }), oci.ErrDescriptor, oci.PullOptions{}},
		{"manifest digest lie", func(l *layoutBuilder, a *oci.Artifact) {
			goodBlobs(l, a)
			d := l.manifest(oci.ManifestMediaType, a.Manifest, "x")
			other := strings.Replace(string(a.Manifest), "1.2.0", "6.6.6", 1)
			l.blobAt(d.Digest, []byte(other)) // same size, other bytes
		}, oci.ErrDescriptor, oci.PullOptions{}},
		{"manifest size lie", func(l *layoutBuilder, a *oci.Artifact) {
			goodBlobs(l, a)
			l.manifest(oci.ManifestMediaType, a.Manifest, "x")
			l.index[len(l.index)-1].Size -= 2
		}, oci.ErrDescriptor, oci.PullOptions{}},
		{"manifest over 4 MiB", manifest(func(m map[string]any) {
			m["annotations"] = map[string]string{"pad": strings.Repeat("x", 4<<20)}
		}), oci.ErrLimit, oci.PullOptions{}},
		{"config over 64 KiB", func(l *layoutBuilder, a *oci.Artifact) {
			big := []byte(`{"schemaVersion":1,"name":"release-notes","version":"1.2.0","pluginSchema":"` + schema + `","pad":"` + strings.Repeat("x", 64<<10) + `"}`)
			_, layer := goodBlobs(l, a)
			l.manifest(oci.ManifestMediaType, pluginManifest(l.blob(oci.ConfigMediaType, big), layer), "x")
		}, oci.ErrLimit, oci.PullOptions{}},
		{"layer over the archive limit", manifest(func(map[string]any) {}), oci.ErrLimit,
			oci.PullOptions{Limits: oci.Limits{Archive: archive.Limits{MaxArchiveBytes: 1000}}}},
		{"layer unpacking over a limit", manifest(func(map[string]any) {}), oci.ErrLimit,
			oci.PullOptions{Limits: oci.Limits{Archive: archive.Limits{MaxFiles: 3}}}},
		{"layer rooted elsewhere", func(l *layoutBuilder, a *oci.Artifact) {
			withLayer(l, "release-notes", packed(t, exampleFiles, "other"))
		}, archive.ErrOutsideRoot, oci.PullOptions{}},
		{"layer without a root", func(l *layoutBuilder, a *oci.Artifact) {
			withLayer(l, "release-notes", packed(t, exampleFiles, ""))
		}, archive.ErrOutsideRoot, oci.PullOptions{}},
		{"layer with a second root", func(l *layoutBuilder, a *oci.Artifact) {
			withLayer(l, "release-notes", gnuTarLayer(t, map[string]string{"release-notes/plugin.json": string(exampleFiles["plugin.json"]), "extra/x": "x"}))
		}, archive.ErrOutsideRoot, oci.PullOptions{}},
		{"config name disagrees", func(l *layoutBuilder, a *oci.Artifact) {
			withLayer(l, "evil", packed(t, exampleFiles, "evil"))
		}, oci.ErrConfig, oci.PullOptions{}},
		{"config version disagrees", config(configJSON("release-notes", "9.9.9", schema)), oci.ErrConfig, oci.PullOptions{}},
		{"config version null, plugin.json has one", config(configJSON("release-notes", nil, schema)), oci.ErrConfig, oci.PullOptions{}},
		{"config schema disagrees", config(configJSON("release-notes", "1.2.0", "https://agent-plugins.org/schemas/9.0.0/plugin.schema.json")), oci.ErrConfig, oci.PullOptions{}},
		{"config without version", config([]byte(`{"schemaVersion":1,"name":"release-notes","pluginSchema":"` + schema + `"}`)), oci.ErrConfig, oci.PullOptions{}},
		{"config name not a string", config([]byte(`{"schemaVersion":1,"name":7,"version":null,"pluginSchema":"` + schema + `"}`)), oci.ErrConfig, oci.PullOptions{}},
		{"config schemaVersion 2", config([]byte(`{"schemaVersion":2,"name":"release-notes","version":"1.2.0","pluginSchema":"` + schema + `"}`)), oci.ErrConfig, oci.PullOptions{}},
		// The layer is fetched while the config is; the config's refusal
		// still comes first, as when they were read one after the other.
		{"config refused and layer digest lie", func(l *layoutBuilder, a *oci.Artifact) {
			layer := l.blob(oci.LayerMediaType, a.Layer)
			l.blobAt(layer.Digest, make([]byte, len(a.Layer)))
			cfg := l.blob(oci.ConfigMediaType, []byte(`{"schemaVersion":2,"name":"release-notes","version":"1.2.0","pluginSchema":"`+schema+`"}`))
			l.manifest(oci.ManifestMediaType, pluginManifest(cfg, layer), "x")
		}, oci.ErrConfig, oci.PullOptions{}},
		{"config duplicate name", config([]byte(`{"schemaVersion":1,"name":"evil","name":"release-notes","version":"1.2.0","pluginSchema":"` + schema + `"}`)), oci.ErrConfig, oci.PullOptions{}},
		{"symbolic link in the layer", func(l *layoutBuilder, a *oci.Artifact) {
			withLayer(l, "release-notes", gnuTarLink(t))
		}, archive.ErrSymlink, oci.PullOptions{}},
		{"rejected plugin inside", func(l *layoutBuilder, a *oci.Artifact) {
			withLayer(l, "release-notes", packed(t, map[string][]byte{"plugin.json": []byte(`{"name":"release-notes"}`)}, "release-notes"))
		}, &agentplugin.RejectedError{}, oci.PullOptions{}},
	}
}

// sameSize pads an archive with zeros (which end any archive) to n bytes.
func sameSize(b []byte, n int) []byte { return append(b, make([]byte, n-len(b))...) }

// pullLayout opens the hand-made layout and pulls sel: oras-go reads every
// manifest the index lists when it opens a layout, so some lies are
// refused there.
func pullLayout(l *layoutBuilder, sel string, opts oci.PullOptions) (*oci.Plugin, error) {
	lay, err := l.tryOpen()
	if err != nil {
		return nil, err
	}
	return oci.Pull(context.Background(), lay, sel, opts)
}

func mustJSON(v any) []byte {
	b, err := marshalJSON(v)
	if err != nil {
		panic(err)
	}
	return b
}

// Every refusal of the profile, each with a hand-made hostile artifact,
// fails with its own error; nothing is returned. Streamed or not.
func TestPullRefusesHostileArtifacts(t *testing.T) {
	a := exampleArtifact(t)
	for c := range streamedOrNot(hostileArtifacts(t)) {
		t.Run(c.name, func(t *testing.T) {
			l := newLayout(t)
			c.build(l, a)
			p, err := pullLayout(l, "x", c.opts)
			var rej *agentplugin.RejectedError
			if _, isRej := c.want.(*agentplugin.RejectedError); isRej {
				if !errors.As(err, &rej) {
					t.Fatalf("Pull = %v, want a rejection", err)
				}
				return
			}
			if p != nil || !errors.Is(err, c.want) {
				t.Fatalf("Pull = %v, %v; want %v", p, err, c.want)
			}
		})
	}
}

// streamedOrNot yields each case as it is, then each again with
// PullOptions.Stream.
func streamedOrNot(cases []hostile) iter.Seq[hostile] {
	return func(yield func(hostile) bool) {
		for _, stream := range []bool{false, true} {
			for _, c := range cases {
				if stream {
					c.name += " (streamed)"
					c.opts.Stream = true
				}
				if !yield(c) {
					return
				}
			}
		}
	}
}

// The index error tells the user what to do.
func TestIndexErrorSaysWhatToDo(t *testing.T) {
	l := newLayout(t)
	hostileArtifacts(t)[0].build(l, exampleArtifact(t))
	_, err := oci.Pull(context.Background(), l.open(), "x", oci.PullOptions{})
	if err == nil || !strings.Contains(err.Error(), "is an index; give the digest of one plugin manifest") {
		t.Fatalf("err = %v", err)
	}
}

// A layer Colossus writes (GNU tar magic, directory entries) is read; the
// same bytes are refused by the strict reader of archive files.
func TestPullReadsGNUTarLayers(t *testing.T) {
	files := map[string]string{}
	for p, b := range examplePackage(t).Snapshot.Files {
		files["release-notes/"+p] = string(b)
	}
	layer := gnuTarLayer(t, files)
	l := newLayout(t)
	withLayer(l, "release-notes", layer)
	p, err := oci.Pull(context.Background(), l.open(), "x", oci.PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Package.Snapshot.Files) != len(files) {
		t.Fatalf("files %v", p.Package.Snapshot.Paths())
	}
	if _, err := archive.Unpack(layer, archive.UnpackOptions{}); !errors.Is(err, archive.ErrMagic) {
		t.Fatalf("strict Unpack of a GNU tar: %v", err)
	}
}

// A layout listing several plugin manifests is read only by exact digest;
// one listing none says so.
func TestLayoutCandidateRule(t *testing.T) {
	ctx := context.Background()
	a := exampleArtifact(t)
	l := newLayout(t)
	cfg, layer := goodBlobs(l, a)
	first := l.manifest(oci.ManifestMediaType, a.Manifest, "1.2.0")
	m := pluginManifest(cfg, layer)
	m["annotations"] = map[string]string{"org.opencontainers.image.version": "other"}
	second := l.manifest(oci.ManifestMediaType, m, "other")
	lay := l.open()
	for _, sel := range []string{"", "1.2.0"} {
		_, err := oci.Pull(ctx, lay, sel, oci.PullOptions{})
		if !errors.Is(err, oci.ErrAmbiguous) || !strings.Contains(err.Error(), first.Digest.String()) || !strings.Contains(err.Error(), second.Digest.String()) {
			t.Errorf("selector %q: %v", sel, err)
		}
	}
	for _, d := range []digest.Digest{first.Digest, second.Digest} {
		if p, err := oci.Pull(ctx, lay, "@"+d.String(), oci.PullOptions{}); err != nil || p.Descriptor.Digest != d {
			t.Errorf("by digest %s: %v", d, err)
		}
	}
	empty := newLayout(t)
	empty.blob(oci.ConfigMediaType, a.Config)
	if _, err := oci.Pull(ctx, empty.open(), "", oci.PullOptions{}); !errors.Is(err, oci.ErrNoPlugin) {
		t.Errorf("empty layout: %v", err)
	}
}

// gnuTarLayer archives files with GNU tar in its own format (GNU magic,
// directory entries), as Colossus writes layers.
func gnuTarLayer(t testing.TB, files map[string]string) []byte {
	t.Helper()
	dir := t.TempDir()
	var names []string
	for p, data := range files {
		full := filepath.Join(dir, "src", filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, strings.SplitN(p, "/", 2)[0])
	}
	return runTar(t, dir, uniq(names)...)
}

// gnuTarLink is a GNU tar layer holding a symbolic link under the root.
func gnuTarLink(t testing.TB) []byte {
	dir := t.TempDir()
	root := filepath.Join(dir, "src", "release-notes")
	os.MkdirAll(root, 0o755)
	os.WriteFile(filepath.Join(root, "plugin.json"), []byte(`{}`), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(root, "evil"))
	return runTar(t, dir, "release-notes")
}

func runTar(t testing.TB, dir string, names ...string) []byte {
	t.Helper()
	out := filepath.Join(dir, "layer.tar.gz")
	args := append([]string{"--format=gnu", "--sort=name", "--owner=0", "--group=0", "--mtime=@0", "-czf", out, "-C", filepath.Join(dir, "src")}, names...)
	if b, err := exec.Command("tar", args...).CombinedOutput(); err != nil {
		t.Skipf("GNU tar: %v: %s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func uniq(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// index.json is bounded and strict before oras-go reads it: over 4 MiB,
// or with duplicate keys, the layout is refused at open.
func TestLayoutIndexIsCheckedFirst(t *testing.T) {
	l := newLayout(t)
	big := `{"schemaVersion":2,"manifests":[],"pad":"` + strings.Repeat("x", 4<<20) + `"}`
	os.WriteFile(filepath.Join(l.dir, "index.json"), []byte(big), 0o644)
	if _, err := oci.OpenLayout(context.Background(), l.dir, false); !errors.Is(err, oci.ErrLimit) {
		t.Errorf("big index.json: %v", err)
	}
	os.WriteFile(filepath.Join(l.dir, "index.json"), []byte(`{"schemaVersion":2,"manifests":[],"manifests":[]}`), 0o644)
	if _, err := oci.OpenLayout(context.Background(), l.dir, false); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("duplicate keys: %v", err)
	}
}
