package oci_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"reflect"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"

	"github.com/plugkit/plugkit/agentplugin"
	measure "github.com/plugkit/plugkit/internal/hostile"
	"github.com/plugkit/plugkit/oci"
)

// bigArtifact is a valid plugin with n files of size random bytes each
// (incompressible, so that the layer is as big as its payload), built
// and stored in a new layout under the tag "x".
func bigArtifact(t testing.TB, n, size int) (*oci.Layout, *oci.Artifact) {
	t.Helper()
	files := measure.Incompressible("data/f", n, size)
	files["plugin.json"] = []byte(`{"$schema":"` + schema + `","name":"big","version":"1.0.0"}`)
	files["skills/one/SKILL.md"] = []byte("---\nname: one\ndescription: The first skill.\n---\nBody.\n")
	files["mcp.json"] = []byte(`{"mcpServers":{"s":{"type":"stdio","command":"./bin/s","unknown":1}}}`)
	files["skills/one/notes.txt"] = []byte("not read by the loader")
	a := artifactOf(t, files)
	l := newLayout(t)
	cfg, layer := goodBlobs(l, a)
	l.manifest(oci.ManifestMediaType, pluginManifest(cfg, layer), "x")
	return l.open(), a
}

// A streamed pull loads the same plugin from the same files as a pull of
// the layer held whole: the same package and diagnostics, every path and
// mode, and the bytes of exactly the files the loader reads. It keeps no
// layer.
func TestPullStreamIsPull(t *testing.T) {
	lay, _ := bigArtifact(t, 3, 1000)
	whole, err := oci.Pull(context.Background(), lay, "x", oci.PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	given := map[string][]byte{}
	streamed, err := oci.Pull(context.Background(), lay, "x", oci.PullOptions{Stream: true,
		OnFile: func(p string, _ fs.FileMode, data []byte) error { given[p] = data; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Package.Diagnostics) == 0 {
		t.Fatal("the plugin has no diagnostic to compare")
	}
	if streamed.Layer != nil {
		t.Errorf("a streamed pull kept the layer (%d bytes)", len(streamed.Layer))
	}
	if streamed.Descriptor.Digest != whole.Descriptor.Digest || streamed.LayerDescriptor.Digest != whole.LayerDescriptor.Digest {
		t.Errorf("streamed %s (layer %s), whole %s (layer %s)", streamed.Descriptor.Digest, streamed.LayerDescriptor.Digest, whole.Descriptor.Digest, whole.LayerDescriptor.Digest)
	}
	ws, ss := whole.Package.Snapshot, streamed.Package.Snapshot
	if !reflect.DeepEqual(ws.Paths(), ss.Paths()) || !reflect.DeepEqual(ws.Modes, ss.Modes) {
		t.Errorf("paths %v modes %v, want %v %v", ss.Paths(), ss.Modes, ws.Paths(), ws.Modes)
	}
	for p, data := range ws.Files {
		if !bytes.Equal(given[p], data) {
			t.Errorf("OnFile was given %d bytes for %s, want %d", len(given[p]), p, len(data))
		}
		switch got := ss.Files[p]; {
		case agentplugin.ReadsContent(p) && !bytes.Equal(got, data):
			t.Errorf("%s: the loader reads it, and the snapshot holds %q, want %q", p, got, data)
		case !agentplugin.ReadsContent(p) && got != nil:
			t.Errorf("%s: the loader does not read it, and the snapshot holds its %d bytes", p, len(got))
		}
	}
	if !reflect.DeepEqual(whole.Package.Diagnostics, streamed.Package.Diagnostics) || whole.Package.Name != streamed.Package.Name ||
		len(whole.Package.Skills) != len(streamed.Package.Skills) || len(whole.Package.Servers) != len(streamed.Package.Servers) {
		t.Errorf("streamed package %+v, whole %+v", streamed.Package, whole.Package)
	}
}

// The expensive shape of a pull is a big layer: streamed, the pull holds
// what is being unpacked, not the layer and its payload.
func TestPullStreamHoldsLittle(t *testing.T) {
	const n, size = 64, 128 << 10
	lay, _ := bigArtifact(t, n, size)
	payload := uint64(n * size)
	pull := func(stream bool) uint64 {
		written := 0
		peak, _ := measure.Heap(func() {
			_, err := oci.Pull(context.Background(), lay, "x", oci.PullOptions{Stream: stream,
				OnFile: func(_ string, _ fs.FileMode, data []byte) error { written += len(data); return nil }})
			if err != nil {
				t.Fatal(err)
			}
		})
		if written < n*size {
			t.Fatalf("OnFile was given %d bytes, want at least %d", written, n*size)
		}
		return peak
	}
	streamed, whole := pull(true), pull(false)
	t.Logf("peak heap pulling %d bytes of files: streamed %d, whole %d", payload, streamed, whole)
	if streamed > payload/2 {
		t.Errorf("a streamed pull peaked at %d bytes of heap for %d bytes of files, want at most half", streamed, payload)
	}
	if whole < payload {
		t.Errorf("a pull of the layer held whole peaked at %d bytes for %d bytes of files: the measure cannot see them held", whole, payload)
	}
}

// failingFetcher gives the layer's content up to after bytes, then fails
// with errBroken; everything else as src has it.
type failingFetcher struct {
	src   content.Fetcher
	layer ocispec.Descriptor
	after int64
	read  *int64 // bytes of the layer given so far
}

var errBroken = errors.New("connection broken")

func (f failingFetcher) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	rc, err := f.src.Fetch(ctx, desc)
	if err != nil || desc.Digest != f.layer.Digest {
		return rc, err
	}
	return struct {
		io.Reader
		io.Closer
	}{io.MultiReader(&countingReader{io.LimitReader(rc, f.after), f.read}, errReader{}), rc}, nil
}

type countingReader struct {
	r io.Reader
	n *int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errBroken }

// A transfer that breaks off is that error, not a refusal of the layer,
// wherever it breaks; an error of OnFile stops the transfer there and is
// returned as it is. The layer is 4 MiB: unpacking reads up to 512 KiB
// ahead of the tar reader (archive's read-ahead), so with 512 KiB of
// files a stopped transfer could not be told from a finished one.
func TestPullStreamErrors(t *testing.T) {
	lay, a := bigArtifact(t, 8, 512<<10)
	desc, err := oci.Resolve(context.Background(), lay, "x")
	if err != nil {
		t.Fatal(err)
	}
	for _, after := range []int64{0, 100, a.LayerDescriptor.Size / 2, a.LayerDescriptor.Size - 1} {
		t.Run(fmt.Sprint("broken after ", after), func(t *testing.T) {
			var read int64
			src := failingFetcher{src: lay, layer: a.LayerDescriptor, after: after, read: &read}
			_, err := oci.PullDescriptor(context.Background(), src, desc, oci.PullOptions{Stream: true})
			if !errors.Is(err, errBroken) || errors.Is(err, oci.ErrDescriptor) {
				t.Fatalf("Pull = %v, want %v", err, errBroken)
			}
		})
	}
	errFull := errors.New("disk full")
	var read int64
	src := failingFetcher{src: lay, layer: a.LayerDescriptor, after: a.LayerDescriptor.Size, read: &read}
	_, err = oci.PullDescriptor(context.Background(), src, desc, oci.PullOptions{Stream: true,
		OnFile: func(string, fs.FileMode, []byte) error { return errFull }})
	if !errors.Is(err, errFull) {
		t.Fatalf("Pull = %v, want %v", err, errFull)
	}
	if read > a.LayerDescriptor.Size/2 {
		t.Errorf("after the first file failed, %d bytes of the %d-byte layer were read", read, a.LayerDescriptor.Size)
	}
}

// FuzzPullStream: whatever the layer holds, a streamed pull of it reads
// as a pull of the layer held whole: the same error, or the same plugin
// from the same files.
func FuzzPullStream(f *testing.F) {
	a := exampleArtifact(f)
	f.Add(a.Layer)
	f.Add(gnuTarLink(f))
	f.Add(gnuTarLayer(f, map[string]string{"release-notes/plugin.json": `{"name":"release-notes"}`, "release-notes/x/y": "z"}))
	f.Add(sameSize(a.Layer, len(a.Layer)+1024))
	f.Add(a.Layer[:len(a.Layer)/2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, layer []byte) {
		ctx := context.Background()
		store := memory.New()
		push := func(mediaType string, b []byte) ocispec.Descriptor {
			d := content.NewDescriptorFromBytes(mediaType, b)
			if err := store.Push(ctx, d, bytes.NewReader(b)); err != nil {
				t.Fatal(err)
			}
			return d
		}
		m := mustJSON(pluginManifest(push(oci.ConfigMediaType, a.Config), push(oci.LayerMediaType, layer)))
		desc := push(oci.ManifestMediaType, m)
		whole, werr := oci.PullDescriptor(ctx, store, desc, oci.PullOptions{})
		given := map[string][]byte{}
		streamed, serr := oci.PullDescriptor(ctx, store, desc, oci.PullOptions{Stream: true,
			OnFile: func(p string, _ fs.FileMode, data []byte) error { given[p] = data; return nil }})
		if werr != nil || serr != nil {
			if werr == nil || serr == nil || werr.Error() != serr.Error() {
				t.Fatalf("whole: %v\nstreamed: %v", werr, serr)
			}
			return
		}
		ws := whole.Package.Snapshot
		if !reflect.DeepEqual(ws.Paths(), streamed.Package.Snapshot.Paths()) || !reflect.DeepEqual(whole.Package.Diagnostics, streamed.Package.Diagnostics) {
			t.Fatalf("whole %v %v\nstreamed %v %v", ws.Paths(), whole.Package.Diagnostics, streamed.Package.Snapshot.Paths(), streamed.Package.Diagnostics)
		}
		for p, data := range ws.Files {
			if !bytes.Equal(given[p], data) {
				t.Fatalf("%s: given %q, want %q", p, given[p], data)
			}
		}
	})
}
