package oci

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"

	"github.com/plugkit/plugkit/internal/atomicfile"
)

// layoutWriter is a layout directory opened for writing. It replaces
// oras-go's layout store, whose open walks the graph below each entry of
// index.json afresh (the cost layoutReader was written to avoid): it
// opens with layoutReader, so it reads each manifest once, and keeps
// the graph up to date as manifests are pushed. Blobs are written to a
// temporary sibling, synced and renamed into place; index.json is
// replaced atomically, sorted, by close.
type layoutWriter struct {
	dir string
	mu  sync.RWMutex // guards r
	// r is the layout as it stands. Its refs are what index.json lists,
	// as oras-go's store keeps them: each ref name and each listed digest
	// to its descriptor; a digest that is also named is listed once,
	// under its names.
	r *layoutReader
}

// openLayoutWriter opens the layout directory dir for writing, creating
// it, its oci-layout file and an empty index.json where missing, so that
// it is a layout from the start.
func openLayoutWriter(ctx context.Context, dir string) (*layoutWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		data func() ([]byte, error)
	}{
		{ocispec.ImageLayoutFile, func() ([]byte, error) { return []byte(layoutFile), nil }},
		{ocispec.ImageIndexFile, func() ([]byte, error) { return marshalIndex(nil) }},
	} {
		path := filepath.Join(dir, f.name)
		if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
			continue // present (readLayout checks it) or unreadable (readLayout says so)
		}
		b, err := f.data()
		if err == nil {
			err = atomicfile.Write(path, b, 0o644)
		}
		if err != nil {
			return nil, err
		}
	}
	return newLayoutWriter(ctx, dir, dirFiles(dir))
}

// newLayoutWriter opens for writing the layout directory dir, read through
// files.
func newLayoutWriter(ctx context.Context, dir string, files layoutFiles) (*layoutWriter, error) {
	r, err := readLayout(ctx, files, dir)
	if err != nil {
		return nil, err
	}
	r.index.Manifests = nil // refs say it now
	return &layoutWriter{dir: dir, r: r}, nil
}

// Fetch reads a blob or manifest.
func (w *layoutWriter) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.r.Fetch(ctx, desc)
}

// Exists reports whether the layout holds desc.
func (w *layoutWriter) Exists(ctx context.Context, desc ocispec.Descriptor) (bool, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.r.Exists(ctx, desc)
}

// Resolve finds a ref name or a listed digest, else a blob by digest.
func (w *layoutWriter) Resolve(ctx context.Context, ref string) (ocispec.Descriptor, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.r.Resolve(ctx, ref)
}

// Predecessors lists the manifests of the layout that list desc.
func (w *layoutWriter) Predecessors(ctx context.Context, desc ocispec.Descriptor) ([]ocispec.Descriptor, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.r.Predecessors(ctx, desc)
}

// Push stores the content of desc, checked against it, as
// blobs/ALG/HEX; a blob already there is errdef.ErrAlreadyExists. A
// manifest or index (at most DefaultMaxManifestBytes, as readers take
// it) is also listed, untagged, in index.json, and what it lists gains
// it as a predecessor, as in oras-go's store.
func (w *layoutWriter) Push(ctx context.Context, desc ocispec.Descriptor, r io.Reader) error {
	name, err := blobName(desc.Digest)
	if err != nil {
		return err
	}
	if ok, err := w.Exists(ctx, desc); err != nil || ok {
		if err == nil {
			err = fmt.Errorf("%s: %w", desc.Digest, errdef.ErrAlreadyExists)
		}
		return err
	}
	if desc.Size < 0 {
		return fmt.Errorf("%w: %s: negative size %d", ErrDescriptor, desc.Digest, desc.Size)
	}
	isManifest := isManifestType(desc.MediaType)
	if isManifest && desc.Size > DefaultMaxManifestBytes {
		return &LimitError{Limit: "MaxManifestBytes", Value: DefaultMaxManifestBytes, Path: desc.Digest.String()}
	}
	path := filepath.Join(w.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return err
	}
	defer f.Abort()
	var kept *bytes.Buffer
	var dst io.Writer = f
	if isManifest {
		kept = bytes.NewBuffer(make([]byte, 0, desc.Size))
		dst = io.MultiWriter(f, kept)
	}
	vr := content.NewVerifyReader(r, desc)
	if _, err := io.Copy(dst, vr); err != nil {
		return fmt.Errorf("push %s: %w", desc.Digest, err)
	}
	if err := vr.Verify(); err != nil {
		return fmt.Errorf("push %s: %w", desc.Digest, err)
	}
	if err := f.Commit(); err != nil {
		return err
	}
	if isManifest {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.r.addManifest(desc, decodeForGraph(kept.Bytes()))
		w.list(desc, desc.Digest.String())
	}
	return nil
}

// Tag names a manifest the layout holds.
func (w *layoutWriter) Tag(ctx context.Context, desc ocispec.Descriptor, ref string) error {
	if ref == "" {
		return errdef.ErrMissingReference
	}
	if ok, err := w.Exists(ctx, desc); err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("%s: %w", desc.Digest, errdef.ErrNotFound)
		}
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list(desc, desc.Digest.String())
	w.list(desc, ref)
	return nil
}

// list lists desc in index.json under ref, a name or its digest.
func (w *layoutWriter) list(desc ocispec.Descriptor, ref string) { w.r.refs[ref] = desc }

// listed is what index.json lists, sorted: every named manifest under
// each of its names, then every other listed manifest untagged.
func (w *layoutWriter) listed() []ocispec.Descriptor {
	w.mu.RLock()
	defer w.mu.RUnlock()
	var manifests []ocispec.Descriptor
	named := map[digest.Digest]bool{}
	for ref, d := range w.r.refs {
		if ref != d.Digest.String() {
			if d.Annotations[annotationRefName] != ref { // as read, it is
				d.Annotations = maps.Clone(d.Annotations)
				if d.Annotations == nil {
					d.Annotations = map[string]string{}
				}
				d.Annotations[annotationRefName] = ref
			}
			manifests = append(manifests, d)
			named[d.Digest] = true
		}
	}
	for ref, d := range w.r.refs {
		if ref == d.Digest.String() && !named[d.Digest] {
			if _, ok := d.Annotations[annotationRefName]; ok {
				d.Annotations = maps.Clone(d.Annotations)
				delete(d.Annotations, annotationRefName)
			}
			manifests = append(manifests, d)
		}
	}
	return sortIndex(manifests)
}

// close replaces index.json atomically with what the layout now lists,
// written as it is encoded.
func (w *layoutWriter) close() error {
	f, err := atomicfile.Create(filepath.Join(w.dir, ocispec.ImageIndexFile), 0o644)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := writeIndex(f, w.listed()); err != nil {
		return err
	}
	return f.Commit()
}
