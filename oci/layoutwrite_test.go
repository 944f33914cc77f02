package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	orasoci "oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/internal/hostile"
	"github.com/plugkit/plugkit/snapshot"
)

// smallArtifact builds the artifact of a plugin that is only its
// plugin.json.
func smallArtifact(t *testing.T, name string) *Artifact {
	t.Helper()
	s, _ := snapshot.FromFiles(map[string][]byte{"plugin.json": []byte(`{"$schema":"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json","name":"` + name + `","version":"1.0.0"}`)})
	pkg, err := agentplugin.Load(s, agentplugin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := Build(pkg, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Pushing into a layout directory, and copying a referrer into it, costs
// what the layout weighs, however many entries of index.json lead to one
// manifest: opening it for writing reads each manifest once (oras-go's
// writable store, like its reader, read a 1 MiB manifest once per ref
// name: 32 s for 2,000), the bytes read stay within twice the layout's
// size, and the peak heap within six times (see costsItsSize). What was there stays listed.
func TestLayoutWriteFanOutCostsItsSize(t *testing.T) {
	for _, throughIndexes := range []bool{false, true} {
		t.Run(map[bool]string{false: "under ref names", true: "below image indexes"}[throughIndexes], func(t *testing.T) {
			ctx := context.Background()
			dir, size, target := fanOutLayout(t, 2000, 1<<20, throughIndexes)
			a := smallArtifact(t, "fanout")
			files := &countingFiles{layoutFiles: dirFiles(dir)}
			var err error
			peak, _ := hostile.Heap(func() {
				var w *layoutWriter
				if w, err = newLayoutWriter(ctx, dir, files); err != nil {
					return
				}
				lay := &Layout{path: dir, rw: w}
				if _, err = Push(ctx, lay, a, "new"); err != nil {
					return
				}
				// A referrer of the big manifest, as copy carries one.
				empty := descriptorOf(emptyConfigMediaType, []byte("{}"))
				sig, _ := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ManifestMediaType,
					ArtifactType: "application/vnd.example.signature", Config: empty, Layers: []ocispec.Descriptor{empty},
					Subject: &ocispec.Descriptor{MediaType: ManifestMediaType, Digest: target}})
				sd := descriptorOf(ManifestMediaType, sig)
				sd.ArtifactType = "application/vnd.example.signature"
				if err = lay.Push(ctx, sd, bytes.NewReader(sig)); err != nil {
					return
				}
				err = lay.Close()
			})
			if err != nil {
				t.Fatal(err)
			}
			costsItsSize(t, files, size, peak)

			back, err := OpenLayout(ctx, dir, false)
			if err != nil {
				t.Fatal(err)
			}
			if p, err := Pull(ctx, back, "new", PullOptions{}); err != nil || p.Descriptor.Digest != a.Descriptor.Digest {
				t.Errorf("the pushed plugin: %v", err)
			}
			if d, err := back.Resolve(ctx, "t1999"); err != nil || !throughIndexes && d.Digest != target {
				t.Errorf("an old tag: %v %v", d, err)
			}
			if refs, err := newGraphCopy(back, nil, 1).referrersOf(ctx, ocispec.Descriptor{Digest: target}); err != nil || len(refs) != 1 || refs[0].ArtifactType != "application/vnd.example.signature" {
				t.Errorf("referrers of the big manifest: %v %v", refs, err)
			}
			if n := len(back.ro.index.Manifests); n != 2000+2 {
				t.Errorf("index.json lists %d manifests, want 2002", n)
			}
		})
	}
}

// A layout opened for writing is a layout at once (oci-layout and an
// empty index.json), and what is pushed into it is listed as oras-go's
// layout store lists it (a tagged manifest under its name only, an
// untagged one by digest with its descriptor), sorted; each blob is a
// file of its own, mode 0644, and no temporary file is left behind.
func TestLayoutWriterListsAsOras(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "new", "layout")
	lay, err := OpenLayout(ctx, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ocispec.ImageLayoutFile, ocispec.ImageIndexFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s after open: %v", name, err)
		}
	}
	orasDir := t.TempDir()
	ref, err := orasoci.New(orasDir)
	if err != nil {
		t.Fatal(err)
	}
	a, b := smallArtifact(t, "a"), smallArtifact(t, "b")
	want := map[string]bool{}
	for _, dst := range []Target{lay, ref} {
		for _, p := range []struct {
			a   *Artifact
			tag string
		}{{a, "1.0"}, {b, ""}, {a, "latest"}} {
			if _, err := Push(ctx, dst, p.a, p.tag); err != nil {
				t.Fatal(err)
			}
			for _, d := range []ocispec.Descriptor{p.a.Descriptor, p.a.ConfigDescriptor, p.a.LayerDescriptor} {
				want[d.Digest.Encoded()] = true
			}
		}
	}
	missing := ocispec.Descriptor{Digest: digest.FromString("missing"), MediaType: ManifestMediaType}
	if err := lay.Tag(ctx, missing, "missing"); !errors.Is(err, errdef.ErrNotFound) {
		t.Errorf("a missing manifest tagged: %v", err)
	}
	if err := lay.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ref.SaveIndex(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, ocispec.ImageIndexFile))
	var orasIndex ocispec.Index
	b2, _ := os.ReadFile(filepath.Join(orasDir, ocispec.ImageIndexFile))
	if err := json.Unmarshal(b2, &orasIndex); err != nil {
		t.Fatal(err)
	}
	if wantIndex, _ := marshalIndex(orasIndex.Manifests); !bytes.Equal(got, wantIndex) {
		t.Errorf("index.json\n%s\noras-go lists\n%s", got, wantIndex)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "blobs", "sha256"))
	for _, e := range entries {
		if fi, _ := e.Info(); !want[e.Name()] || fi.Mode().Perm() != 0o644 {
			t.Errorf("blob file %s: mode %v", e.Name(), fi.Mode())
		}
		delete(want, e.Name())
	}
	if len(want) != 0 {
		t.Errorf("blobs missing: %v", want)
	}
}

// A push the descriptor does not describe is refused and leaves no file:
// content that hashes otherwise, or is shorter or longer, a negative size,
// a manifest over MaxManifestBytes.
func TestLayoutWriterRefusesLies(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lay, err := OpenLayout(ctx, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	good := []byte(`{"a":1}`)
	d := descriptorOf(ManifestMediaType, good)
	for name, c := range map[string]struct {
		desc ocispec.Descriptor
		b    []byte
		want error
	}{
		"other content": {d, []byte(`{"a":2}`), content.ErrMismatchedDigest},
		"shorter":       {d, good[:3], io.ErrUnexpectedEOF},
		"longer":        {d, append(good, ' '), content.ErrTrailingData},
		"negative size": {ocispec.Descriptor{MediaType: ManifestMediaType, Digest: d.Digest, Size: -1}, good, ErrDescriptor},
		"huge manifest": {ocispec.Descriptor{MediaType: ManifestMediaType, Digest: d.Digest, Size: DefaultMaxManifestBytes + 1}, good, ErrLimit},
	} {
		if err := lay.Push(ctx, c.desc, bytes.NewReader(c.b)); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "blobs", "sha256")); len(entries) != 0 {
		t.Errorf("refused pushes left %d files", len(entries))
	}
	if err := lay.Close(); err != nil {
		t.Fatal(err)
	}
	back, err := OpenLayout(ctx, dir, false)
	if err != nil || len(back.ro.index.Manifests) != 0 {
		t.Errorf("index.json after refusals: %v %v", back, err)
	}
}
