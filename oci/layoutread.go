package oci

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"

	"github.com/plugkit/plugkit/internal/boundedfile"
)

// layoutReader reads an OCI image layout, a directory or a tar of one. It
// replaces oras-go's read-only layout store, whose loader walks the graph
// below each entry of index.json afresh: an index listing one 4 MiB
// manifest (or an index above it) ten thousand times, under ten thousand
// tags, made it read that manifest ten thousand times. Here every manifest
// is read once, within MaxManifestBytes, however often it is listed, so
// that opening a layout costs what its files weigh. The manifests read
// are kept: reading a plugin and its referrers fetches them again.
type layoutReader struct {
	files     layoutFiles
	index     ocispec.Index
	manifests map[digest.Digest]*layoutManifest
	// refs maps each ref name and each listed digest to its index entry;
	// the last entry wins, as in oras-go. A digest resolves to the plain
	// descriptor.
	refs  map[string]ocispec.Descriptor
	preds map[digest.Digest][]ocispec.Descriptor
	edges map[[2]digest.Digest]bool // (successor, predecessor) pairs in preds
}

// layoutFiles are the files of a layout, by slash-separated name.
type layoutFiles interface {
	// open opens a regular file; a missing one is fs.ErrNotExist.
	open(name string) (io.ReadCloser, error)
	size(name string) (int64, error)
}

// maxLayoutFileBytes bounds the oci-layout file, a one-line document.
const maxLayoutFileBytes = 64 << 10

// readLayout opens the layout in files (named where in errors): its
// oci-layout file, its index.json (strict JSON, within MaxManifestBytes),
// and every manifest reachable from the index, once each, for the graph
// of predecessors.
func readLayout(ctx context.Context, files layoutFiles, where string) (*layoutReader, error) {
	b, err := readLayoutFile(files, ocispec.ImageLayoutFile, maxLayoutFileBytes, "oci-layout size")
	if err != nil {
		return nil, fmt.Errorf("OCI layout %s: %w", where, err)
	}
	var lf ocispec.ImageLayout
	if err := json.Unmarshal(b, &lf); err != nil || lf.Version != ocispec.ImageLayoutVersion {
		return nil, fmt.Errorf("OCI layout %s: oci-layout is %q, want imageLayoutVersion %s", where, b, ocispec.ImageLayoutVersion)
	}
	idx, err := readIndex(files, where)
	if err != nil {
		return nil, err
	}
	// The maps start at sizes the index announces (each manifest listed
	// by digest and most often by name; each listing two or three blobs),
	// so that they are not rebuilt as they grow: every table outgrown is
	// fresh memory, and each page of it a fault. The hints stay within
	// twice the index's entries: an index is bounded by MaxManifestBytes.
	n := len(idx.Manifests)
	r := &layoutReader{files: files, index: *idx, refs: make(map[string]ocispec.Descriptor, 2*n), preds: make(map[digest.Digest][]ocispec.Descriptor, n),
		edges: make(map[[2]digest.Digest]bool, 2*n), manifests: make(map[digest.Digest]*layoutManifest, n)}
	for _, d := range idx.Manifests {
		r.refs[d.Digest.String()] = d
		if name := d.Annotations[annotationRefName]; name != "" {
			r.refs[name] = d
		}
	}
	if err := r.loadGraph(ctx); err != nil {
		return nil, fmt.Errorf("OCI layout %s: %w", where, err)
	}
	return r, nil
}

// readIndex reads and checks a layout's index.json.
func readIndex(files layoutFiles, where string) (*ocispec.Index, error) {
	b, err := readLayoutFile(files, ocispec.ImageIndexFile, DefaultMaxManifestBytes, "MaxManifestBytes")
	if err != nil {
		return nil, fmt.Errorf("OCI layout %s: %w", where, err)
	}
	var idx ocispec.Index
	if err := strictJSON(b, &idx); err != nil {
		return nil, fmt.Errorf("OCI layout %s: index.json: %w", where, err)
	}
	return &idx, nil
}

func readLayoutFile(files layoutFiles, name string, limit int64, limitName string) ([]byte, error) {
	f, err := files.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, _ := files.size(name) // a hint; a wrong or failed one costs only growing the buffer
	return boundedfile.ReadAll(f, size, limit, limitName, name)
}

// loadGraph reads every manifest and index reachable from index.json (by a
// sha256 digest), each once, and records, for every descriptor one of them lists (subject,
// config, layers, manifests, blobs), the manifests that list it. A
// manifest index.json lists but the layout lacks is skipped, as oras-go
// skips it; one that is over MaxManifestBytes or does not match its
// descriptor fails the open. The graph is walked breadth first, one level
// at a time: the manifests of a level are read, checked and decoded on
// every CPU, then recorded in order, so that the graph and the first
// error are those of a walk one manifest at a time.
func (r *layoutReader) loadGraph(ctx context.Context) error {
	read := make(map[digest.Digest]bool, len(r.index.Manifests))
	level := make([]ocispec.Descriptor, 0, len(r.index.Manifests))
	for _, d := range r.index.Manifests {
		level = append(level, plain(d))
	}
	for len(level) > 0 {
		nodes := make([]ocispec.Descriptor, 0, len(level))
		for _, node := range level {
			// plugkit reads sha256 content only: a node named otherwise
			// can be no plugin or referrer it reads, and is left unread.
			if !isManifestType(node.MediaType) || read[node.Digest] || !isSHA256(node.Digest) {
				continue
			}
			read[node.Digest] = true
			nodes = append(nodes, node)
		}
		loaded := make([]loadedManifest, len(nodes))
		parallel(len(nodes), runtime.GOMAXPROCS(0), func(i int) { loaded[i] = r.loadManifest(ctx, nodes[i]) })
		level = level[:0]
		for i, l := range loaded {
			if errors.Is(l.err, errdef.ErrNotFound) {
				continue
			}
			if l.err != nil {
				return l.err
			}
			r.addManifest(nodes[i], l)
			// Only a manifest or index lists more: the configs and layers
			// a level lists (most of what it lists) are not carried to the
			// next, which would skip them.
			for _, s := range l.lists {
				if isManifestType(s.MediaType) {
					level = append(level, plain(s))
				}
			}
		}
	}
	return nil
}

// loadedManifest is a manifest or index read for the graph: decoded, with
// the descriptors it lists, or the error that stopped its reading.
type loadedManifest struct {
	m     *layoutManifest
	lists []ocispec.Descriptor
	err   error
}

// loadManifest reads, checks and decodes the manifest or index node. It
// only reads r, and may run beside other loadManifests.
func (r *layoutReader) loadManifest(ctx context.Context, node ocispec.Descriptor) loadedManifest {
	b, err := fetchVerified(ctx, r, node, DefaultMaxManifestBytes, "MaxManifestBytes")
	if err != nil {
		return loadedManifest{err: err}
	}
	return decodeForGraph(b)
}

// decodeForGraph decodes b, the verified content of a manifest or index,
// and finds the descriptors it lists.
func decodeForGraph(b []byte) loadedManifest {
	m := newLayoutManifest(b)
	lists, ok := m.graphSuccessors()
	if !ok {
		lists = listedIn(b)
	}
	return loadedManifest{m: m, lists: lists}
}

// addManifest keeps the manifest or index node loaded and records node as
// a predecessor of every descriptor it lists.
func (r *layoutReader) addManifest(node ocispec.Descriptor, l loadedManifest) {
	r.manifests[node.Digest] = l.m
	for _, s := range l.lists {
		if e := [2]digest.Digest{s.Digest, node.Digest}; !r.edges[e] {
			r.edges[e] = true
			r.preds[s.Digest] = append(r.preds[s.Digest], plain(node))
		}
	}
}

// listedIn decodes the descriptors the manifest or index b lists
// (subject, config, layers, manifests, blobs): none when it does not
// decode.
func listedIn(b []byte) []ocispec.Descriptor {
	var doc struct {
		Subject                  *ocispec.Descriptor
		Config                   ocispec.Descriptor
		Layers, Manifests, Blobs []ocispec.Descriptor
	}
	if json.Unmarshal(b, &doc) != nil {
		return nil // not a manifest: it lists nothing
	}
	succ := append(append(doc.Layers, doc.Manifests...), doc.Blobs...)
	if doc.Config.Digest != "" {
		succ = append(succ, doc.Config)
	}
	if doc.Subject != nil {
		succ = append(succ, *doc.Subject)
	}
	return succ
}

// plain is a descriptor's media type, digest and size only, as oras-go's
// layout store resolves digests.
func plain(d ocispec.Descriptor) ocispec.Descriptor {
	return ocispec.Descriptor{MediaType: d.MediaType, Digest: d.Digest, Size: d.Size}
}

// blobName is where a layout keeps the blob of d.
func blobName(d digest.Digest) (string, error) {
	if !isSHA256(d) {
		if err := d.Validate(); err != nil {
			return "", fmt.Errorf("%w: %q: %v", errdef.ErrInvalidDigest, d, err)
		}
	}
	// A valid digest's algorithm and hex are clean names: joined as they
	// are, where path.Join cleaned them again (half of blobName's time, and
	// blobName is called for every blob an export stages, opens and names).
	return ocispec.ImageBlobsDir + "/" + d.Algorithm().String() + "/" + d.Encoded(), nil
}

// Fetch opens the blob desc names.
func (r *layoutReader) Fetch(_ context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	if m, ok := r.manifests[desc.Digest]; ok {
		return io.NopCloser(bytes.NewReader(m.raw)), nil
	}
	name, err := blobName(desc.Digest)
	if err != nil {
		return nil, err
	}
	f, err := r.files.open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", desc.Digest, errdef.ErrNotFound)
	}
	return f, err
}

// manifest is the manifest or index d, decoded, if the layout holds it.
func (r *layoutReader) manifest(d digest.Digest) *layoutManifest { return r.manifests[d] }

// Exists reports whether the layout holds the blob desc names.
func (r *layoutReader) Exists(_ context.Context, desc ocispec.Descriptor) (bool, error) {
	if _, ok := r.manifests[desc.Digest]; ok {
		return true, nil
	}
	name, err := blobName(desc.Digest)
	if err != nil {
		return false, err
	}
	_, err = r.files.size(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Resolve finds a ref name or a digest index.json lists, else a blob by
// digest (application/octet-stream: its content decides what it is).
func (r *layoutReader) Resolve(_ context.Context, ref string) (ocispec.Descriptor, error) {
	if d, ok := r.refs[ref]; ok {
		if ref == d.Digest.String() {
			return plain(d), nil
		}
		return d, nil
	}
	if d := digest.Digest(ref); d.Validate() == nil {
		name, _ := blobName(d)
		if size, err := r.files.size(name); err == nil {
			return ocispec.Descriptor{MediaType: octetStreamMediaType, Digest: d, Size: size}, nil
		}
	}
	return ocispec.Descriptor{}, fmt.Errorf("%s: %w", ref, errdef.ErrNotFound)
}

// Predecessors lists the manifests of the layout that list desc.
func (r *layoutReader) Predecessors(_ context.Context, desc ocispec.Descriptor) ([]ocispec.Descriptor, error) {
	return append([]ocispec.Descriptor(nil), r.preds[desc.Digest]...), nil
}

// dirFiles are the files of a layout directory.
type dirFiles string

func (d dirFiles) open(name string) (io.ReadCloser, error) {
	// A named pipe would block the reader, a device have effects: only
	// regular files are blobs, and only they are opened (openBlob).
	path := d.path(name)
	size, err := regularSize(path, name)
	if err != nil {
		return nil, err
	}
	return openBlob(path, size)
}

func (d dirFiles) size(name string) (int64, error) { return regularSize(d.path(name), name) }

func (d dirFiles) path(name string) string {
	return filepath.Join(string(d), filepath.FromSlash(name))
}

// tarFiles are the regular files of a layout tar: where each one's bytes
// lie in the tar, found in one pass over its headers.
type tarFiles struct {
	path    string
	entries map[string]tarEntry
}

type tarEntry struct{ offset, size int64 }

// scanTar lists the regular files of the tar at file. A name that appears
// twice is refused: two readers could take either.
func scanTar(file string) (*tarFiles, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t := &tarFiles{path: file, entries: map[string]tarEntry{}}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return t, nil
		}
		if err != nil {
			return nil, fmt.Errorf("OCI layout %s: %w", file, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name := path.Clean(h.Name)
		if _, dup := t.entries[name]; dup {
			return nil, fmt.Errorf("OCI layout %s: %s appears twice in the tar", file, name)
		}
		// tar.Reader leaves the file at the start of the entry's bytes.
		off, err := f.Seek(0, io.SeekCurrent)
		if err != nil {
			return nil, err
		}
		t.entries[name] = tarEntry{offset: off, size: h.Size}
	}
}

func (t *tarFiles) open(name string) (io.ReadCloser, error) {
	e, ok := t.entries[name]
	if !ok {
		return nil, fmt.Errorf("%s: %w in the tar", name, fs.ErrNotExist)
	}
	f, err := os.Open(t.path)
	if err != nil {
		return nil, err
	}
	return sectionFile{io.NewSectionReader(f, e.offset, e.size), f}, nil
}

func (t *tarFiles) size(name string) (int64, error) {
	e, ok := t.entries[name]
	if !ok {
		return 0, fmt.Errorf("%s: %w in the tar", name, fs.ErrNotExist)
	}
	return e.size, nil
}

// sectionFile reads one member of a tar file and closes the file.
type sectionFile struct {
	*io.SectionReader
	io.Closer
}
