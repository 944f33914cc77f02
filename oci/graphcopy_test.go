package oci_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"

	measure "github.com/plugkit/plugkit/internal/hostile"
	"github.com/plugkit/plugkit/oci"
)

// The lean CLI must not link oras-go's root package: its initialiser
// compiles mediaTypeRegexp, whose counted repetitions cost about 3 ms and
// 290 kB at every start of plugkit, whatever the verb.
func TestPlugkitLinksNoOrasRoot(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list what cmd/plugkit links:", err)
	}
	out, err := exec.Command(goCmd, "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "../cmd/plugkit").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		pkg, imports, _ := strings.Cut(sc.Text(), " ")
		for _, imp := range strings.Fields(imports) {
			if imp == "oras.land/oras-go/v2" {
				t.Errorf("%s imports oras.land/oras-go/v2, linking it into cmd/plugkit: its init (mediaTypeRegexp) costs ~3 ms at every start; use its subpackages (content, errdef, registry...)", pkg)
			}
		}
	}
}

// referrerChain is a layout holding the plugin tagged x, a signature of
// it and an attestation of the signature, each referrer a manifest of an
// empty config and one layer.
type referrerChain struct {
	l                         *layoutBuilder
	plugin, sig, att          ocispec.Descriptor
	empty, sigLayer, attLayer ocispec.Descriptor
}

// newReferrerChain writes it; the signature's layer is left out of the
// layout when missing.
func newReferrerChain(t *testing.T, missing bool) *referrerChain {
	c := &referrerChain{l: newLayout(t)}
	cfg, layer := goodBlobs(c.l, exampleArtifact(t))
	c.plugin = c.l.manifest(oci.ManifestMediaType, pluginManifest(cfg, layer), "x")
	c.empty = c.l.blob("application/vnd.oci.empty.v1+json", []byte("{}"))
	c.sigLayer = c.l.blob("application/vnd.example.signature", []byte("signature of release-notes"))
	if missing {
		sig := []byte("signature nobody stored")
		c.sigLayer = ocispec.Descriptor{MediaType: "application/vnd.example.signature", Digest: digest.FromBytes(sig), Size: int64(len(sig))}
	}
	c.attLayer = c.l.blob("application/vnd.example.attestation", []byte("attestation of the signature"))
	note := func(subject, layer ocispec.Descriptor) ocispec.Descriptor {
		return c.l.manifest(oci.ManifestMediaType, ocispec.Manifest{Versioned: specsV2, MediaType: oci.ManifestMediaType,
			ArtifactType: layer.MediaType, Config: c.empty, Layers: []ocispec.Descriptor{layer}, Subject: &subject}, "")
	}
	c.sig = note(c.plugin, c.sigLayer)
	c.att = note(c.sig, c.attLayer)
	return c
}

// watchedSource is a layout reached through the methods of a GraphSource
// only, as a registry is, counting the fetches of each digest; onFetch,
// when set, is called before each.
type watchedSource struct {
	lay     *oci.Layout
	onFetch func(ocispec.Descriptor)
	mu      sync.Mutex
	fetches map[digest.Digest]int
}

func watch(lay *oci.Layout) *watchedSource {
	return &watchedSource{lay: lay, fetches: map[digest.Digest]int{}}
}

func (w *watchedSource) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	if w.onFetch != nil {
		w.onFetch(desc)
	}
	w.mu.Lock()
	w.fetches[desc.Digest]++
	w.mu.Unlock()
	return w.lay.Fetch(ctx, desc)
}

func (w *watchedSource) Exists(ctx context.Context, desc ocispec.Descriptor) (bool, error) {
	return w.lay.Exists(ctx, desc)
}

func (w *watchedSource) Predecessors(ctx context.Context, desc ocispec.Descriptor) ([]ocispec.Descriptor, error) {
	return w.lay.Predecessors(ctx, desc)
}

func (w *watchedSource) Resolve(ctx context.Context, ref string) (ocispec.Descriptor, error) {
	return w.lay.Resolve(ctx, ref)
}

// count is how often d was fetched, and forgets it.
func (w *watchedSource) count(d ocispec.Descriptor) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.fetches[d.Digest]
	delete(w.fetches, d.Digest)
	return n
}

func newStore(t *testing.T) *oci.Layout {
	t.Helper()
	dst, err := oci.OpenLayout(context.Background(), filepath.Join(t.TempDir(), "dst"), true)
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// A copy reads each referrer manifest once (to find its subject; the
// bytes read are those pushed) and each blob once; a node the
// destination has is not fetched again, nor anything below it.
func TestCopyFetchesNothingTwice(t *testing.T) {
	ctx := context.Background()
	c := newReferrerChain(t, false)
	src := watch(c.l.open())
	dst := newStore(t)
	if _, err := oci.Copy(ctx, src, "x", dst, "x", oci.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []ocispec.Descriptor{c.sig, c.att, c.empty, c.sigLayer, c.attLayer} {
		if n := src.count(d); n != 1 {
			t.Errorf("first copy: %s fetched %d times, want once", d.Digest, n)
		}
	}
	if _, err := oci.Copy(ctx, src, "x", dst, "x", oci.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []ocispec.Descriptor{c.sig, c.att, c.empty, c.sigLayer, c.attLayer} {
		want := 0
		if d.Digest == c.sig.Digest || d.Digest == c.att.Digest {
			want = 1 // read to find its subject
		}
		if n := src.count(d); n != want {
			t.Errorf("copy again: %s fetched %d times, want %d", d.Digest, n, want)
		}
	}

	// A destination holding the signature's manifest alone: nothing below
	// it is fetched, or copied; the attestation is.
	dst = newStore(t)
	raw, _ := io.ReadAll(must(c.l.open().Fetch(ctx, c.sig)))
	if err := dst.Push(ctx, c.sig, bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	if _, err := oci.Copy(ctx, src, "x", dst, "x", oci.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := src.count(c.sigLayer); n != 0 {
		t.Errorf("under a signature the destination has: its layer fetched %d times", n)
	}
	for _, d := range []ocispec.Descriptor{c.sigLayer, c.att, c.attLayer} {
		want := d.Digest != c.sigLayer.Digest
		if ok, err := dst.Exists(ctx, d); ok != want || err != nil {
			t.Errorf("destination has %s: %v %v, want %v", d.Digest, ok, err, want)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A referrer's blob missing at the source fails Copy, and Export from the
// layout or from any other source, with an error naming it.
func TestCopyNamesMissingReferrerBlob(t *testing.T) {
	ctx := context.Background()
	c := newReferrerChain(t, true)
	lay := c.l.open()
	_, err := oci.Copy(ctx, lay, "x", newStore(t), "x", oci.PullOptions{})
	var ce *oci.CopyError
	if !errors.As(err, &ce) || ce.Op != "Fetch" || ce.Destination || ce.Digest != c.sigLayer.Digest || !errors.Is(err, errdef.ErrNotFound) {
		t.Errorf("Copy = %v, want the Fetch of %s failed at the source, ErrNotFound", err, c.sigLayer.Digest)
	}
	for _, src := range []oci.GraphSource{lay, watch(lay)} {
		_, err := oci.Export(ctx, io.Discard, []oci.ExportItem{{Source: src, Selector: "x"}}, t.TempDir(), oci.ExportOptions{})
		if !errors.Is(err, errdef.ErrNotFound) || !strings.Contains(err.Error(), c.sigLayer.Digest.String()) {
			t.Errorf("Export from %T = %v, want ErrNotFound naming %s", src, err, c.sigLayer.Digest)
		}
	}
}

// refusingStore is a layout refusing the push of one digest.
type refusingStore struct {
	oci.Store
	refuse digest.Digest
}

var errRefused = errors.New("refused by the test")

func (r refusingStore) Push(ctx context.Context, desc ocispec.Descriptor, rd io.Reader) error {
	if desc.Digest == r.refuse {
		return errRefused
	}
	return r.Store.Push(ctx, desc, rd)
}

// A push the destination refuses fails the copy, and nothing that lists
// the refused node is pushed.
func TestCopyStopsAtRefusedPush(t *testing.T) {
	ctx := context.Background()
	c := newReferrerChain(t, false)
	dst := newStore(t)
	_, err := oci.Copy(ctx, c.l.open(), "x", refusingStore{dst, c.sigLayer.Digest}, "x", oci.PullOptions{})
	var ce *oci.CopyError
	if !errors.Is(err, errRefused) || !errors.As(err, &ce) || ce.Op != "Push" || !ce.Destination || ce.Digest != c.sigLayer.Digest {
		t.Fatalf("Copy = %v, want the Push of %s refused at the destination", err, c.sigLayer.Digest)
	}
	for _, d := range []ocispec.Descriptor{c.sig, c.att} {
		if ok, _ := dst.Exists(ctx, d); ok {
			t.Errorf("%s pushed above a refused blob", d.Digest)
		}
	}
}

// A copy whose context is cancelled stops: cancelled while it reads the
// last referrer, it fetches no blob and pushes no referrer after, and
// returns the context's error. (The layout does not look at the context:
// the walk must.)
func TestCopyStopsWhenCancelled(t *testing.T) {
	c := newReferrerChain(t, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := watch(c.l.open())
	src.onFetch = func(d ocispec.Descriptor) {
		if d.Digest == c.att.Digest {
			cancel()
		}
	}
	dst := newStore(t)
	if _, err := oci.Copy(ctx, src, "x", dst, "x", oci.PullOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Copy = %v, want context.Canceled", err)
	}
	for _, d := range []ocispec.Descriptor{c.empty, c.sigLayer, c.attLayer} {
		if n := src.count(d); n != 0 {
			t.Errorf("%s fetched %d times after the copy was cancelled", d.Digest, n)
		}
	}
	for _, d := range []ocispec.Descriptor{c.sig, c.att} {
		if ok, _ := dst.Exists(context.Background(), d); ok {
			t.Errorf("%s pushed after the copy was cancelled", d.Digest)
		}
	}
}

// A copy costs what the referrers weigh, whatever their shape: 2,000
// referrers of the plugin, or a chain of 1,000 each the subject of the
// next. Each manifest is fetched once, the peak heap stays within 16
// times the layout's size (7-8 times here), and the goroutines at once
// within a budget that a goroutine for each referrer waiting its turn
// exceeded (3,923 for the 2,000); a chain, walked down through each
// subject, holds one for each level.
func TestCopyManyReferrersCostsTheirSize(t *testing.T) {
	for _, c := range []struct {
		name       string
		n          int
		chain      bool
		goroutines int
	}{
		{"2,000 referrers of the plugin", 2000, false, 64},
		{"a chain of 1,000 referrers", 1000, true, 3 * 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			l := newLayout(t)
			cfg, layer := goodBlobs(l, exampleArtifact(t))
			plugin := l.manifest(oci.ManifestMediaType, pluginManifest(cfg, layer), "x")
			empty := l.blob("application/vnd.oci.empty.v1+json", []byte("{}"))
			var refs []ocispec.Descriptor
			subject := plugin
			for i := range c.n {
				sig := l.blob("application/vnd.example.signature", []byte(fmt.Sprint("signature ", i)))
				s := subject
				r := l.manifest(oci.ManifestMediaType, ocispec.Manifest{Versioned: specsV2, MediaType: oci.ManifestMediaType,
					ArtifactType: sig.MediaType, Config: empty, Layers: []ocispec.Descriptor{sig}, Subject: &s}, "")
				refs = append(refs, r)
				if c.chain {
					subject = r
				}
			}
			src := watch(l.open())
			var most atomic.Int64
			src.onFetch = func(ocispec.Descriptor) {
				if n := int64(runtime.NumGoroutine()); n > most.Load() {
					most.Store(n)
				}
			}
			dst := newStore(t)
			var copied *oci.Copied
			var err error
			peak, _ := measure.Heap(func() { copied, err = oci.Copy(ctx, src, "x", dst, "x", oci.PullOptions{}) })
			if err != nil {
				t.Fatal(err)
			}
			if len(copied.Referrers) != c.n {
				t.Fatalf("%d referrers copied, want %d", len(copied.Referrers), c.n)
			}
			for _, r := range refs {
				if n := src.count(r); n != 1 {
					t.Fatalf("referrer %s fetched %d times, want once", r.Digest, n)
				}
			}
			size := dirSize(t, l.dir)
			t.Logf("%d-byte layout: peak heap %d, at most %d goroutines", size, peak, most.Load())
			if peak > uint64(16*size) {
				t.Errorf("peak heap %d bytes for a %d-byte layout", peak, size)
			}
			if most.Load() > int64(c.goroutines) {
				t.Errorf("%d goroutines at once, want at most %d", most.Load(), c.goroutines)
			}
		})
	}
}

// dirSize is the bytes of the regular files under dir.
func dirSize(t *testing.T, dir string) int64 {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
			total += fi.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return total
}
