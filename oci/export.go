package oci

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"

	"github.com/plugkit/plugkit/archive"
)

// ExportItem is one plugin to export: the plugin Selector names in Source,
// listed in index.json under Name (org.opencontainers.image.ref.name;
// empty for none).
type ExportItem struct {
	Source   GraphSource
	Selector string
	Name     string
}

// layoutFile is the oci-layout file of every layout this package writes.
const layoutFile = `{"imageLayoutVersion":"1.0.0"}`

// Export writes the air-gap file: an OCI image layout holding the plugins,
// their blobs and all their referrers, as a plain tar stream on w. Every
// plugin is checked as Pull checks it. The tar holds regular files only,
// mode 0644, uid/gid 0, mtime 0, sorted names: blobs/sha256/..., index.json
// (sorted: each plugin under its Name, every referrer untagged with its
// artifactType, since a layout reader finds nothing index.json does not
// list) and oci-layout. The same content always gives the same bytes.
// Blobs are staged in a temporary file in tmpDir ("" for the system's),
// removed on return.
func Export(ctx context.Context, w io.Writer, items []ExportItem, tmpDir string, opts PullOptions) ([]*Copied, error) {
	st, err := newStage(tmpDir)
	if err != nil {
		return nil, err
	}
	defer st.remove()
	copied, err := copyAll(ctx, items, st, opts)
	if err != nil {
		return nil, err
	}
	var entries []ocispec.Descriptor
	seen := map[string]bool{}
	for i, it := range items {
		c := copied[i]
		d := indexEntry(c.Plugin.Descriptor)
		if it.Name != "" {
			d.Annotations = map[string]string{annotationRefName: it.Name}
		}
		entries = append(entries, d)
		for _, r := range c.Referrers {
			if !seen[r.Digest.String()] {
				seen[r.Digest.String()] = true
				entries = append(entries, indexEntry(r))
			}
		}
	}
	index, err := marshalIndex(entries)
	if err != nil {
		return nil, err
	}
	if err := st.writeTar(w, index); err != nil {
		return nil, err
	}
	return copied, nil
}

// copyAll copies the items into st, as many at once as there are CPUs:
// checking each plugin (unpacking and loading it) is most of an export's
// work. After a failure the error returned is that of the first item, in
// the order given, among those that failed.
func copyAll(ctx context.Context, items []ExportItem, st *stage, opts PullOptions) ([]*Copied, error) {
	copied := make([]*Copied, len(items))
	errs := make([]error, len(items))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, it := range items {
		g.Go(func() error {
			if copied[i], errs[i] = exportOne(ctx, it, st, opts); errs[i] != nil {
				errs[i] = fmt.Errorf("%s: %w", it.Selector, errs[i])
			}
			return nil
		})
	}
	g.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return copied, nil
}

// exportOne is Copy into a stage: the plugin's three blobs, which Pull has
// read and checked and which stay in memory for the returned Copied, are
// staged as they are, neither copied nor hashed again; the referrers are
// copied by oras.
func exportOne(ctx context.Context, it ExportItem, st *stage, opts PullOptions) (*Copied, error) {
	p, err := Pull(ctx, it.Source, it.Selector, opts)
	if err != nil {
		return nil, err
	}
	st.keep(p.ConfigDescriptor, p.Config)
	st.keep(p.LayerDescriptor, p.Layer)
	st.keep(p.Descriptor, p.Manifest)
	refs, err := copyReferrers(ctx, it.Source, st, p.Descriptor)
	if err != nil {
		return nil, err
	}
	return &Copied{Plugin: p, Referrers: refs}, nil
}

// stage is where Export gathers blobs before it writes the tar: one spool
// file they are appended to, each checked against its descriptor as it is
// written, and where each lies in it. Staging each blob as a file of its
// own (through a temporary file synced and renamed into place), as a
// layout directory does, cost more than the rest of an export. The blobs
// of the plugins themselves, already in memory, are kept there. A stage
// keeps no tags.
type stage struct {
	f     *os.File
	mu    sync.Mutex // held while a blob is appended
	end   int64
	buf   []byte // the copy buffer of Push, used under mu
	blobs map[digest.Digest]stagedBlob
}

// stagedBlob is where a staged blob lies: data, or else size bytes of the
// spool file from offset.
type stagedBlob struct {
	data         []byte
	offset, size int64
}

func (b stagedBlob) reader(f *os.File) io.Reader {
	if b.data != nil {
		return bytes.NewReader(b.data)
	}
	return io.NewSectionReader(f, b.offset, b.size)
}

func newStage(dir string) (*stage, error) {
	f, err := os.CreateTemp(dir, ".plugkit-export-*")
	if err != nil {
		return nil, err
	}
	return &stage{f: f, blobs: map[digest.Digest]stagedBlob{}}, nil
}

// remove deletes the spool file.
func (s *stage) remove() {
	s.f.Close()
	os.Remove(s.f.Name())
}

// keep stages b, the verified content of desc, in memory.
func (s *stage) keep(desc ocispec.Descriptor, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blobs[desc.Digest] = stagedBlob{data: b, size: desc.Size}
}

// Push appends the blob; one already staged is errdef.ErrAlreadyExists.
func (s *stage) Push(_ context.Context, desc ocispec.Descriptor, r io.Reader) error {
	if _, err := blobName(desc.Digest); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.blobs[desc.Digest]; ok {
		return fmt.Errorf("%s: %w", desc.Digest, errdef.ErrAlreadyExists)
	}
	vr := content.NewVerifyReader(r, desc)
	if s.buf == nil {
		s.buf = make([]byte, 32<<10)
	}
	_, err := io.CopyBuffer(io.NewOffsetWriter(s.f, s.end), vr, s.buf)
	if err == nil {
		err = vr.Verify()
	}
	if err != nil {
		return fmt.Errorf("%s: %w", desc.Digest, err) // the next blob overwrites what was written
	}
	s.blobs[desc.Digest] = stagedBlob{offset: s.end, size: desc.Size}
	s.end += desc.Size
	return nil
}

// Exists reports whether the blob is staged.
func (s *stage) Exists(_ context.Context, desc ocispec.Descriptor) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.blobs[desc.Digest]
	return ok, nil
}

// Fetch reads a staged blob.
func (s *stage) Fetch(_ context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	s.mu.Lock()
	b, ok := s.blobs[desc.Digest]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%s: %w", desc.Digest, errdef.ErrNotFound)
	}
	return io.NopCloser(b.reader(s.f)), nil
}

// Resolve finds nothing: a stage keeps no names.
func (s *stage) Resolve(_ context.Context, ref string) (ocispec.Descriptor, error) {
	return ocispec.Descriptor{}, fmt.Errorf("%s: %w", ref, errdef.ErrNotFound)
}

// Tag is not supported: Export names plugins in its own index.json.
func (s *stage) Tag(context.Context, ocispec.Descriptor, string) error {
	return errdef.ErrUnsupported
}

// writeTar writes the staged blobs as blobs/ALG/HEX in name order, then
// index and oci-layout, as a layout tar.
func (s *stage) writeTar(w io.Writer, index []byte) error {
	names := make(map[string]stagedBlob, len(s.blobs))
	for d, b := range s.blobs {
		name, _ := blobName(d) // Push or Pull checked it
		names[name] = b
	}
	tw := archive.NewTarWriter(w)
	for _, name := range slices.Sorted(maps.Keys(names)) {
		b := names[name]
		if err := tw.WriteFile(name, 0o644, b.size, b.reader(s.f)); err != nil {
			return err
		}
	}
	for _, f := range []struct{ name, data string }{{ocispec.ImageIndexFile, string(index)}, {ocispec.ImageLayoutFile, layoutFile}} {
		if err := tw.WriteFile(f.name, 0o644, int64(len(f.data)), strings.NewReader(f.data)); err != nil {
			return err
		}
	}
	return tw.Close()
}

// indexEntry is the descriptor index.json lists for a manifest: media
// type, digest, size and artifactType only.
func indexEntry(d ocispec.Descriptor) ocispec.Descriptor {
	return ocispec.Descriptor{MediaType: d.MediaType, Digest: d.Digest, Size: d.Size, ArtifactType: d.ArtifactType}
}
