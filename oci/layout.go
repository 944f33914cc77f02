package oci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
)

// ErrReadOnly is returned by writes to a layout opened for reading, or to
// a layout tar (Export writes those).
var ErrReadOnly = errors.New("layout is read-only")

// Layout is an OCI image layout: a directory, or a tar of one (read-only).
// It is a Source for Pull and Copy and, opened for writing, a destination.
type Layout struct {
	path string
	ro   *layoutReader // reading
	rw   *layoutWriter // writing
}

// graphStore is what both layout stores offer.
type graphStore interface {
	content.ReadOnlyGraphStorage
	Resolve(ctx context.Context, reference string) (ocispec.Descriptor, error)
}

// OpenLayout opens the layout at path. For reading, path must be a layout
// directory or a tar of one, and nothing is written; index.json and every
// manifest it leads to are read and checked now. For writing, path is a
// directory, created when missing; call Close to write index.json sorted.
func OpenLayout(ctx context.Context, path string, write bool) (*Layout, error) {
	fi, err := os.Stat(path)
	isTar := err == nil && fi.Mode().IsRegular() || err != nil && strings.HasSuffix(path, ".tar")
	l := &Layout{path: path}
	switch {
	case write && isTar:
		return nil, fmt.Errorf("%s: %w: a layout tar is written whole by export", path, ErrReadOnly)
	case write:
		if l.rw, err = openLayoutWriter(ctx, path); err != nil {
			return nil, err
		}
		return l, nil
	case err != nil:
		return nil, err
	case !isTar && !fi.IsDir():
		return nil, fmt.Errorf("%s: not a layout directory or tar", path)
	}
	var files layoutFiles = dirFiles(path)
	if isTar {
		if files, err = scanTar(path); err != nil {
			return nil, err
		}
	}
	if l.ro, err = readLayout(ctx, files, path); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Layout) store() graphStore {
	if l.rw != nil {
		return l.rw
	}
	return l.ro
}

// Fetch reads a blob or manifest of the layout.
func (l *Layout) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	return l.store().Fetch(ctx, desc)
}

// Exists reports whether the layout holds desc.
func (l *Layout) Exists(ctx context.Context, desc ocispec.Descriptor) (bool, error) {
	return l.store().Exists(ctx, desc)
}

// Resolve finds a tag (org.opencontainers.image.ref.name) or digest.
func (l *Layout) Resolve(ctx context.Context, ref string) (ocispec.Descriptor, error) {
	return l.store().Resolve(ctx, ref)
}

// manifest is the manifest d decoded, when the layout is open for reading
// and holds it.
func (l *Layout) manifest(d digest.Digest) *layoutManifest {
	if l.ro == nil {
		return nil
	}
	return l.ro.manifest(d)
}

// Predecessors lists the manifests index.json lists that refer to desc.
func (l *Layout) Predecessors(ctx context.Context, desc ocispec.Descriptor) ([]ocispec.Descriptor, error) {
	return l.store().Predecessors(ctx, desc)
}

// Push stores content in a layout opened for writing.
func (l *Layout) Push(ctx context.Context, desc ocispec.Descriptor, r io.Reader) error {
	if l.rw == nil {
		return fmt.Errorf("%s: %w", l.path, ErrReadOnly)
	}
	return l.rw.Push(ctx, desc, r)
}

// Tag names a manifest in a layout opened for writing.
func (l *Layout) Tag(ctx context.Context, desc ocispec.Descriptor, ref string) error {
	if l.rw == nil {
		return fmt.Errorf("%s: %w", l.path, ErrReadOnly)
	}
	return l.rw.Tag(ctx, desc, ref)
}

// Close writes index.json of a layout opened for writing, its manifests
// sorted and replaced atomically.
func (l *Layout) Close() error {
	if l.rw == nil {
		return nil
	}
	return l.rw.close()
}

// indexFile is index.json: as read at open, or as Close would write it.
func (l *Layout) indexFile() (*ocispec.Index, error) {
	if l.ro != nil {
		return &l.ro.index, nil
	}
	return &ocispec.Index{Manifests: l.rw.listed()}, nil
}

// candidates are the plugin manifests index.json lists, each once, in
// index order: entries of the manifest media type whose artifactType (in
// the entry, else in the manifest) is the profile's.
func (l *Layout) candidates(ctx context.Context) ([]ocispec.Descriptor, error) {
	idx, err := l.indexFile()
	if err != nil {
		return nil, err
	}
	var out []ocispec.Descriptor
	seen := map[digest.Digest]bool{} // a hostile index lists thousands
	for _, d := range idx.Manifests {
		if d.MediaType != ManifestMediaType || seen[d.Digest] {
			continue
		}
		seen[d.Digest] = true
		at := d.ArtifactType
		if at == "" {
			b, err := fetchVerified(ctx, l, d, DefaultMaxManifestBytes, "MaxManifestBytes")
			if err != nil {
				return nil, fmt.Errorf("OCI layout %s: %w", l.path, err)
			}
			var m manifestDoc
			if strictDecode(l.manifest(d.Digest), b, &m, (*manifestFields).manifestDoc) != nil {
				continue // not a manifest at all: not a candidate
			}
			at = m.ArtifactType
		}
		if at == ArtifactType {
			out = append(out, d)
		}
	}
	return out, nil
}
