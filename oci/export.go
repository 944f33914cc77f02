package oci

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
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

// ExportOptions control Export. The zero value checks what it transports
// with the default limits and leaves the layers' archives to whoever
// imports the tar.
type ExportOptions struct {
	// PullOptions are the limits of what is read and, with Check, how
	// plugins are loaded.
	PullOptions
	// Check reads every plugin as Pull does: its layer is also unpacked,
	// checked against its config and loaded. Without it, Export checks
	// each plugin manifest against the profile (media types,
	// artifactType, one layer of the layer type, sizes and limits), the
	// config, and the size and digest of every blob it writes, but not
	// the archive inside the layer: copy, pull and install check that
	// when they read the tar.
	Check bool
}

// Export writes the air-gap file: an OCI image layout holding the plugins,
// their blobs and all their referrers, as a plain tar stream on w. The
// tar holds regular files only, mode 0644, uid/gid 0, mtime 0, sorted
// names: blobs/sha256/..., index.json (sorted: each plugin under its
// Name, every referrer untagged with its artifactType, since a layout
// reader finds nothing index.json does not list) and oci-layout. The same
// content always gives the same bytes, with or without opts.Check.
//
// Every plugin is checked (see ExportOptions) before anything is written
// on w, except the size and digest of blobs read from a layout (*Layout),
// which are checked as they are copied from it into the tar: after an
// error, w holds a partial tar, to be discarded. Blobs read from
// elsewhere are staged, in memory or in a temporary file in tmpDir (""
// for the system's) removed on return.
func Export(ctx context.Context, w io.Writer, items []ExportItem, tmpDir string, opts ExportOptions) ([]*Copied, error) {
	st := newStage(tmpDir)
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
	if err := st.writeTar(ctx, w, index); err != nil {
		return nil, err
	}
	return copied, nil
}

// copyAll copies the items into st, as many at once as there are CPUs:
// with Check, unpacking and loading each plugin is most of an export's
// work; without, from a registry, each blob is a round trip. After a
// failure the error returned is that of the first item, in the
// order given, among those that failed.
func copyAll(ctx context.Context, items []ExportItem, st *stage, opts ExportOptions) ([]*Copied, error) {
	copied := make([]*Copied, len(items))
	errs := make([]error, len(items))
	parallel(len(items), runtime.GOMAXPROCS(0), func(i int) {
		if copied[i], errs[i] = exportOne(ctx, items[i], st, opts); errs[i] != nil {
			errs[i] = fmt.Errorf("%s: %w", items[i].Selector, errs[i])
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return copied, nil
}

// parallel calls do(i) for every i below n, on at most workers
// goroutines that take them in turn: one goroutine per call grew a new
// stack through the JSON decoder each time (8% of an export's CPU time),
// and a goroutine for each of thousands of calls waiting their turn
// costs more than the work they wait for.
func parallel(n, workers int, do func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				do(i)
			}
		})
	}
	wg.Wait()
}

// exportOne is Copy into a stage: the plugin's three blobs
// (exportPlugin), then the referrers: those of a layout staged unread by
// stageReferrers, others copied by copyReferrers.
func exportOne(ctx context.Context, it ExportItem, st *stage, opts ExportOptions) (*Copied, error) {
	p, err := exportPlugin(ctx, it, st, opts)
	if err != nil {
		return nil, err
	}
	var refs []ocispec.Descriptor
	if from := st.from(it.Source); from.local {
		refs, err = from.stageReferrers(ctx, p.Descriptor)
	} else {
		refs, err = copyReferrers(ctx, it.Source, from, p.Descriptor)
	}
	if err != nil {
		return nil, err
	}
	return &Copied{Plugin: p, Referrers: refs}, nil
}

// exportPlugin checks the plugin it names and stages its three blobs.
// With Check, Pull reads and checks it, and the blobs it holds in memory
// for the returned Plugin are staged as they are, neither copied nor
// hashed again. Without, the manifest and config are read and checked,
// and the layer, its descriptor checked against the limits by
// readManifest, is staged as its source allows (stageFrom.add); the
// Plugin returned has neither Layer nor Package.
func exportPlugin(ctx context.Context, it ExportItem, st *stage, opts ExportOptions) (*Plugin, error) {
	var p *Plugin
	var err error
	if opts.Check {
		if p, err = Pull(ctx, it.Source, it.Selector, opts.PullOptions); err != nil {
			return nil, err
		}
		st.keep(p.LayerDescriptor, p.Layer)
	} else {
		lim := opts.Limits.withDefaults()
		if p, err = readManifestRef(ctx, it.Source, it.Selector, lim); err != nil {
			return nil, err
		}
		if err := p.readConfig(ctx, it.Source, lim); err != nil {
			return nil, err
		}
		if err := st.from(it.Source).add(ctx, p.LayerDescriptor, lim.Archive.MaxArchiveBytes, "MaxArchiveBytes"); err != nil {
			return nil, fmt.Errorf("layer: %w", err)
		}
	}
	st.keep(p.ConfigDescriptor, p.Config)
	st.keep(p.Descriptor, p.Manifest)
	return p, nil
}

// stage is where Export gathers blobs before it writes the tar, each
// where it costs least: the blobs of a layout on disk stay there, read
// and checked against their descriptors as they are copied into the tar;
// blobs already in memory (manifests, configs, layers Pull checked) stay
// there; others are appended to one spool file, each checked against its
// descriptor as it is written. Staging each blob as a file of its own
// (through a temporary file synced and renamed into place), as a layout
// directory does, cost more than the rest of an export. The spool file is
// made by the first blob appended, in dir: an export from layouts makes
// none. A stage keeps no tags.
type stage struct {
	dir   string
	mu    sync.Mutex // held while a blob is appended
	f     *os.File   // the spool file, or nil
	end   int64
	buf   []byte // the copy buffer of Push, used under mu
	blobs map[digest.Digest]stagedBlob
}

// stagedBlob is where a staged blob of size bytes lies: in data; in src,
// as desc (src is a layout, and the content is checked against desc when
// it is read); or else in the spool file from offset.
type stagedBlob struct {
	data         []byte
	src          content.Fetcher
	desc         ocispec.Descriptor
	offset, size int64
}

// open reads the blob, checked against its descriptor when it comes from
// its source: the returned verifyReader, nil for a blob checked when it
// was staged.
func (b stagedBlob) open(ctx context.Context, spool *os.File) (io.ReadCloser, *verifyReader, error) {
	switch {
	case b.src != nil:
		rc, err := b.src.Fetch(ctx, b.desc)
		if err != nil {
			return nil, nil, fmt.Errorf("fetch %s: %w", b.desc.Digest, err)
		}
		vr := newVerifyReader(rc, b.desc)
		return struct {
			io.Reader
			io.Closer
		}{vr, rc}, vr, nil
	case b.data != nil:
		return io.NopCloser(bytes.NewReader(b.data)), nil, nil
	}
	return io.NopCloser(io.NewSectionReader(spool, b.offset, b.size)), nil, nil
}

func newStage(dir string) *stage {
	return &stage{dir: dir, blobs: map[digest.Digest]stagedBlob{}}
}

// remove deletes the spool file, if any.
func (s *stage) remove() {
	if s.f != nil {
		s.f.Close()
		os.Remove(s.f.Name())
	}
}

// keep stages b, the verified content of desc, in memory.
func (s *stage) keep(desc ocispec.Descriptor, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blobs[desc.Digest] = stagedBlob{data: b, size: desc.Size}
}

// has reports whether a blob of desc's digest is staged; one staged with
// another size is ErrDescriptor: one of the two descriptors lies. Called
// under mu.
func (s *stage) has(desc ocispec.Descriptor) (bool, error) {
	b, ok := s.blobs[desc.Digest]
	if ok && b.size != desc.Size {
		return false, fmt.Errorf("%w: %s: a descriptor says %d bytes, another %d", ErrDescriptor, desc.Digest, desc.Size, b.size)
	}
	return ok, nil
}

// absent refuses a blob already staged (errdef.ErrAlreadyExists) or
// staged with another size (see has). Called under mu.
func (s *stage) absent(desc ocispec.Descriptor) error {
	ok, err := s.has(desc)
	if err == nil && ok {
		err = fmt.Errorf("%s: %w", desc.Digest, errdef.ErrAlreadyExists)
	}
	return err
}

// Push appends the blob; one already staged is errdef.ErrAlreadyExists.
func (s *stage) Push(_ context.Context, desc ocispec.Descriptor, r io.Reader) error {
	if _, err := blobName(desc.Digest); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.absent(desc); err != nil {
		return err
	}
	if s.f == nil {
		f, err := os.CreateTemp(s.dir, ".plugkit-export-*")
		if err != nil {
			return err
		}
		s.f, s.buf = f, make([]byte, 32<<10)
	}
	vr := newVerifyReader(r, desc)
	_, err := io.CopyBuffer(io.NewOffsetWriter(s.f, s.end), vr, s.buf)
	if err = vr.verdict(err); err != nil {
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
	return s.has(desc)
}

// Fetch reads a staged blob.
func (s *stage) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	s.mu.Lock()
	b, ok := s.blobs[desc.Digest]
	spool := s.f
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%s: %w", desc.Digest, errdef.ErrNotFound)
	}
	rc, _, err := b.open(ctx, spool)
	return rc, err
}

// Resolve finds nothing: a stage keeps no names.
func (s *stage) Resolve(_ context.Context, ref string) (ocispec.Descriptor, error) {
	return ocispec.Descriptor{}, fmt.Errorf("%s: %w", ref, errdef.ErrNotFound)
}

// Tag is not supported: Export names plugins in its own index.json.
func (s *stage) Tag(context.Context, ocispec.Descriptor, string) error {
	return errdef.ErrUnsupported
}

// from is s as the destination of blobs read from src.
func (s *stage) from(src content.Fetcher) stageFrom {
	_, local := src.(*Layout)
	return stageFrom{s, src, local}
}

// stageFrom is a stage receiving the blobs of one source. Those of a
// layout (local) are not read when they are staged but when the tar is
// written, straight from the layout's files into the tar and checked
// against their descriptors then: copying them first (into memory or the
// spool file) was the most of an export that checks no archive.
type stageFrom struct {
	*stage
	src   content.Fetcher
	local bool
}

// stageReferrers is copyReferrers into s from a local source, whose
// blobs are staged unread, to be read when the tar is written; the walk
// stays on this goroutine: oras-go's, which started a goroutine for every
// node and grew its stack each time, was 10% of the CPU samples of an
// export of 100 small plugins, for blobs that are not read here.
func (s stageFrom) stageReferrers(ctx context.Context, node ocispec.Descriptor) ([]ocispec.Descriptor, error) {
	w := newGraphCopy(s.src.(*Layout), s, 1) // local: a *Layout
	w.put = func(_ context.Context, desc ocispec.Descriptor) error { return s.later(desc) }
	return w.copyReferrers(ctx, node)
}

// add stages a blob of the source its descriptor names, a descriptor
// checked against limit (named limitName) already: a local one to be read
// when the tar is written, any other read now, checked and kept in memory
// (as Pull keeps a layer), so that the transfers from registries overlap.
func (s stageFrom) add(ctx context.Context, desc ocispec.Descriptor, limit int64, limitName string) error {
	if s.local {
		if err := s.later(desc); !errors.Is(err, errdef.ErrAlreadyExists) {
			return err
		}
		return nil
	}
	b, err := fetchVerified(ctx, s.src, desc, limit, limitName)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ok, err := s.has(desc); err != nil || ok {
		return err
	}
	s.blobs[desc.Digest] = stagedBlob{data: b, size: desc.Size}
	return nil
}

// later stages a blob of the local source to be read when the tar is
// written; one already staged is errdef.ErrAlreadyExists. A manifest the
// layout holds, checked against its digest when the layout was opened, is
// staged from memory when its size matches.
func (s stageFrom) later(desc ocispec.Descriptor) error {
	if _, err := blobName(desc.Digest); err != nil {
		return err
	}
	if desc.Size < 0 {
		return fmt.Errorf("%w: %s: negative size %d", ErrDescriptor, desc.Digest, desc.Size)
	}
	b := stagedBlob{src: s.src, desc: desc, size: desc.Size}
	if m := heldManifest(s.src, desc.Digest); m != nil && int64(len(m.raw)) == desc.Size {
		b = stagedBlob{data: m.raw, size: desc.Size}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.absent(desc); err != nil {
		return err
	}
	s.blobs[desc.Digest] = b
	return nil
}

// writeTar writes the staged blobs as blobs/ALG/HEX in name order, then
// index and oci-layout, as a layout tar. A blob read from its source that
// does not match its descriptor stops it with ErrDescriptor.
func (s *stage) writeTar(ctx context.Context, w io.Writer, index []byte) error {
	// The names, each with its digest, sorted: a map from names to copies
	// of the staged blobs was the most of what writing the tar allocated.
	type named struct {
		name string
		d    digest.Digest
	}
	names := make([]named, 0, len(s.blobs))
	for d := range s.blobs {
		name, _ := blobName(d) // Push, add or Pull checked it
		names = append(names, named{name, d})
	}
	slices.SortFunc(names, func(a, b named) int { return strings.Compare(a.name, b.name) })
	tw := archive.NewTarWriter(w)
	for _, n := range names {
		if err := ctx.Err(); err != nil { // interrupted: the tar is discarded
			return err
		}
		if err := writeBlob(ctx, tw, n.name, s.blobs[n.d], s.f); err != nil {
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

// writeBlob writes b into tw as name.
func writeBlob(ctx context.Context, tw *archive.TarWriter, name string, b stagedBlob, spool *os.File) error {
	rc, vr, err := b.open(ctx, spool)
	if err != nil {
		return err
	}
	defer rc.Close()
	err = tw.WriteFile(name, 0o644, b.size, rc)
	if vr != nil {
		err = vr.verdict(err)
	}
	return err
}

// indexEntry is the descriptor index.json lists for a manifest: media
// type, digest, size and artifactType only.
func indexEntry(d ocispec.Descriptor) ocispec.Descriptor {
	return ocispec.Descriptor{MediaType: d.MediaType, Digest: d.Digest, Size: d.Size, ArtifactType: d.ArtifactType}
}
