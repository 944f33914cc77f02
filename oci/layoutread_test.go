package oci

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/plugkit/plugkit/internal/hostile"
)

// countingFiles counts the bytes read from a layout's files.
type countingFiles struct {
	layoutFiles
	read atomic.Int64
}

func (c *countingFiles) open(name string) (io.ReadCloser, error) {
	f, err := c.layoutFiles.open(name)
	if err != nil {
		return nil, err
	}
	return countingReader{f, &c.read}, nil
}

type countingReader struct {
	io.ReadCloser
	n *atomic.Int64
}

func (r countingReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.n.Add(int64(n))
	return n, err
}

// stageBlob stores b in the layout directory dir.
func stageBlob(t *testing.T, dir, mediaType string, b []byte) ocispec.Descriptor {
	t.Helper()
	d := descriptorOf(mediaType, b)
	if err := os.WriteFile(filepath.Join(dir, "blobs", "sha256", d.Digest.Encoded()), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

// costsItsSize checks that opening a layout of size bytes read at most
// twice that from files and held at most six times that at once (peak
// heap): the cost of its size, not of how many times its parts are named
// (oras-go's loader read a 1 MiB manifest once per name). A layout of
// small documents takes more room decoded than as JSON, and the peak
// counts garbage not yet swept: 2.9-4.0 times the size in 30 runs under
// the race detector (2,000 image indexes), which a bound of four failed
// once in CI.
func costsItsSize(t *testing.T, files *countingFiles, size int64, peak uint64) {
	t.Helper()
	if read := files.read.Load(); read > 2*size {
		t.Errorf("read %d bytes of a %d-byte layout", read, size)
	}
	if peak > uint64(6*size) {
		t.Errorf("peak heap %d bytes for a %d-byte layout", peak, size)
	}
	t.Logf("%d-byte layout: read %d bytes, peak heap %d", size, files.read.Load(), peak)
}

// fanOutLayout writes a layout whose index.json lists n entries that all
// lead to one manifest of about big bytes: under n ref names, or through n
// small image indexes above it. It returns the directory, the bytes of
// its files and the manifest's digest.
func fanOutLayout(t *testing.T, n, big int, throughIndexes bool) (string, int64, digest.Digest) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "blobs", "sha256"), 0o755)
	os.WriteFile(filepath.Join(dir, "oci-layout"), []byte(layoutFile), 0o644)
	empty := stageBlob(t, dir, emptyConfigMediaType, []byte("{}"))
	m, _ := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ManifestMediaType,
		Config: empty, Layers: []ocispec.Descriptor{empty}, Annotations: map[string]string{"pad": strings.Repeat("x", big)}})
	target := stageBlob(t, dir, ManifestMediaType, m)
	var entries []ocispec.Descriptor
	for i := range n {
		e := target
		if throughIndexes {
			idx, _ := json.Marshal(ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: indexMediaType,
				Manifests: []ocispec.Descriptor{target}, Annotations: map[string]string{"n": fmt.Sprint(i)}})
			e = stageBlob(t, dir, indexMediaType, idx)
		}
		e.Annotations = map[string]string{annotationRefName: fmt.Sprint("t", i)}
		entries = append(entries, e)
	}
	b, _ := json.Marshal(ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, Manifests: entries})
	os.WriteFile(filepath.Join(dir, "index.json"), b, 0o644)
	var total int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, _ error) error {
		if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
			total += fi.Size()
		}
		return nil
	})
	return dir, total, target.Digest
}

// Opening a layout reads each manifest once, however many entries of
// index.json lead to it (oras-go's loader read it once per entry): the
// bytes read stay within twice the layout's size, for a 1 MiB manifest
// under 2,000 ref names or below 2,000 image indexes.
func TestLayoutFanOutCostsItsSize(t *testing.T) {
	for _, throughIndexes := range []bool{false, true} {
		t.Run(map[bool]string{false: "under ref names", true: "below image indexes"}[throughIndexes], func(t *testing.T) {
			dir, size, target := fanOutLayout(t, 2000, 1<<20, throughIndexes)
			files := &countingFiles{layoutFiles: dirFiles(dir)}
			var r *layoutReader
			var err error
			peak, _ := hostile.Heap(func() { r, err = readLayout(context.Background(), files, dir) })
			if err != nil {
				t.Fatal(err)
			}
			costsItsSize(t, files, size, peak)
			// The graph is whole: below the indexes, the manifest has
			// each of them as a predecessor.
			if n := len(r.preds[target]); throughIndexes && n != 2000 {
				t.Errorf("the manifest has %d predecessors, want 2000", n)
			}
		})
	}
}

// layoutOf writes a layout directory whose index.json lists what
// entries returns, given the directory to stage blobs in.
func layoutOf(t *testing.T, entries func(dir string) []ocispec.Descriptor) string {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "blobs", "sha256"), 0o755)
	os.WriteFile(filepath.Join(dir, "oci-layout"), []byte(layoutFile), 0o644)
	b, _ := json.Marshal(ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, Manifests: entries(dir)})
	os.WriteFile(filepath.Join(dir, "index.json"), b, 0o644)
	return dir
}

// The manifests of a layout are read on every CPU, yet the graph lists
// predecessors in the order of a walk one manifest at a time, and opening
// fails with the error of the first bad manifest in that order, run after
// run.
func TestLayoutOpenIsOrderedAsOneAtATime(t *testing.T) {
	var subject ocispec.Descriptor
	var referrers, bad []ocispec.Descriptor
	stage := func(dir string) []ocispec.Descriptor {
		empty := stageBlob(t, dir, emptyConfigMediaType, []byte("{}"))
		subject = stageBlob(t, dir, ManifestMediaType, []byte(`{"schemaVersion":2,"layers":[]}`))
		referrers, bad = nil, nil
		for i := range 40 {
			s := subject
			m, _ := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ManifestMediaType,
				Config: empty, Subject: &s, Annotations: map[string]string{"n": fmt.Sprint(i)}})
			referrers = append(referrers, stageBlob(t, dir, ManifestMediaType, m))
			d := stageBlob(t, dir, ManifestMediaType, []byte(fmt.Sprintf(`{"schemaVersion":2,"n":%d}`, i)))
			d.Size++ // a size lie
			bad = append(bad, d)
		}
		return append([]ocispec.Descriptor{subject}, referrers...)
	}
	good := layoutOf(t, stage)
	for range 20 {
		r, err := readLayout(context.Background(), dirFiles(good), good)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.preds[subject.Digest]; fmt.Sprint(got) != fmt.Sprint(referrers) {
			t.Fatalf("predecessors %v, want index order %v", got, referrers)
		}
	}
	broken := layoutOf(t, func(dir string) []ocispec.Descriptor { return append(stage(dir), bad...) })
	for range 20 {
		_, err := readLayout(context.Background(), dirFiles(broken), broken)
		if err == nil || !strings.Contains(err.Error(), bad[0].Digest.String()) {
			t.Fatalf("opening fails with %v, want the error of %s", err, bad[0].Digest)
		}
	}
}

// blobName joins a valid digest's parts as path.Join did, and refuses an
// invalid one: its parts could be no clean names.
func TestBlobName(t *testing.T) {
	for _, d := range []digest.Digest{digest.FromString("x"), digest.SHA512.FromString("x")} {
		if got, err := blobName(d); err != nil || got != path.Join("blobs", d.Algorithm().String(), d.Encoded()) {
			t.Errorf("blobName(%s) = %q, %v", d, got, err)
		}
	}
	for _, d := range []digest.Digest{"sha256:../../etc/passwd", digest.Digest("sha256/x:" + digest.FromString("x").Encoded()), "md5:00", ""} {
		if got, err := blobName(d); err == nil {
			t.Errorf("blobName(%q) = %q, want an error", d, got)
		}
	}
}
