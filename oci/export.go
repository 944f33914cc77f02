package oci

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"

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
// Blobs are staged in a temporary directory under tmpDir ("" for the
// system's), removed on return.
func Export(ctx context.Context, w io.Writer, items []ExportItem, tmpDir string, opts PullOptions) ([]*Copied, error) {
	stage, err := os.MkdirTemp(tmpDir, ".plugkit-export-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	layout, err := OpenLayout(ctx, filepath.Join(stage, "layout"), true)
	if err != nil {
		return nil, err
	}
	layout.rw.AutoSaveIndex = false // the tar gets its own index.json
	copied, err := copyAll(ctx, items, layout, opts)
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
	if err := writeLayoutTar(w, filepath.Join(stage, "layout"), index); err != nil {
		return nil, err
	}
	return copied, nil
}

// copyAll copies the items into dst, as many at once as there are CPUs:
// checking each plugin (unpacking and loading it) is most of an export's
// work. After a failure the error returned is that of the first item, in
// the order given, among those that failed.
func copyAll(ctx context.Context, items []ExportItem, dst Target, opts PullOptions) ([]*Copied, error) {
	copied := make([]*Copied, len(items))
	errs := make([]error, len(items))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, it := range items {
		g.Go(func() error {
			if copied[i], errs[i] = Copy(ctx, it.Source, it.Selector, dst, "", opts); errs[i] != nil {
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

// indexEntry is the descriptor index.json lists for a manifest: media
// type, digest, size and artifactType only.
func indexEntry(d ocispec.Descriptor) ocispec.Descriptor {
	return ocispec.Descriptor{MediaType: d.MediaType, Digest: d.Digest, Size: d.Size, ArtifactType: d.ArtifactType}
}

// writeLayoutTar writes the blobs of the layout directory dir (never its
// ingest/ staging area nor its own index.json), then index and oci-layout.
func writeLayoutTar(w io.Writer, dir string, index []byte) error {
	tw := archive.NewTarWriter(w)
	blobs := filepath.Join(dir, ocispec.ImageBlobsDir)
	algs, err := os.ReadDir(blobs) // sorted by name
	if err != nil {
		return err
	}
	for _, alg := range algs {
		files, err := os.ReadDir(filepath.Join(blobs, alg.Name()))
		if err != nil {
			return err
		}
		for _, f := range files {
			if err := writeBlob(tw, filepath.Join(blobs, alg.Name(), f.Name()), ocispec.ImageBlobsDir+"/"+alg.Name()+"/"+f.Name()); err != nil {
				return err
			}
		}
	}
	for _, f := range []struct{ name, data string }{{ocispec.ImageIndexFile, string(index)}, {ocispec.ImageLayoutFile, layoutFile}} {
		if err := tw.WriteFile(f.name, 0o644, int64(len(f.data)), strings.NewReader(f.data)); err != nil {
			return err
		}
	}
	return tw.Close()
}

func writeBlob(tw *archive.TarWriter, path, name string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	return tw.WriteFile(name, 0o644, fi.Size(), f)
}
