package oci_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/plugkit/plugkit/oci"
)

// exportBytes exports items into memory.
func exportBytes(t *testing.T, items []oci.ExportItem) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := oci.Export(context.Background(), &b, items, t.TempDir(), oci.PullOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// otherPlugin is a second plugin in a layout directory of its own.
func otherPlugin(t *testing.T) *oci.Layout {
	a := manifestOnly(t, `{"$schema":"`+schema+`","name":"other","version":"0.1.0"}`)
	dir := filepath.Join(t.TempDir(), "other")
	lay, err := oci.OpenLayout(context.Background(), dir, true)
	if err != nil {
		t.Fatal(err)
	}
	mustPush(t, lay, a, "0.1.0")
	if err := lay.Close(); err != nil {
		t.Fatal(err)
	}
	ro, _ := oci.OpenLayout(context.Background(), dir, false)
	return ro
}

// The air-gap tar: regular files only, 0644, uid/gid 0, mtime 0, sorted
// names, no ingest/, index.json sorted with each plugin under its name and
// the signature untagged with its artifactType; the same content gives the
// same bytes whatever the order of the plugins; it reads back as a layout
// that needs digests (several plugins).
func TestExportTarFormat(t *testing.T) {
	ctx := context.Background()
	golden, _ := oci.OpenLayout(ctx, signedTar, false)
	other := otherPlugin(t)
	items := []oci.ExportItem{
		{Source: golden, Selector: "1.2.0", Name: "plugins/release-notes:1.2.0"},
		{Source: other, Selector: "0.1.0", Name: "plugins/other:0.1.0"},
	}
	b := exportBytes(t, items)
	if again := exportBytes(t, []oci.ExportItem{items[1], items[0]}); !bytes.Equal(b, again) {
		t.Fatal("export depends on the order of its arguments")
	}
	tr := tar.NewReader(bytes.NewReader(b))
	var names []string
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg || h.Mode != 0o644 || h.Uid != 0 || h.Gid != 0 || h.ModTime.Unix() != 0 || h.Uname != "" || h.Format != tar.FormatUSTAR {
			t.Errorf("%s: %+v", h.Name, h)
		}
		names = append(names, h.Name)
		files[h.Name], _ = io.ReadAll(tr)
	}
	if !slices.IsSorted(names) || names[len(names)-2] != "index.json" || names[len(names)-1] != "oci-layout" {
		t.Errorf("names %v", names)
	}
	// 6 blobs of the golden layout + 3 of the other plugin.
	if len(names) != 11 {
		t.Errorf("%d entries: %v", len(names), names)
	}
	var idx ocispec.Index
	if err := json.Unmarshal(files["index.json"], &idx); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range idx.Manifests {
		got = append(got, m.Annotations[ocispec.AnnotationRefName]+" "+m.ArtifactType+" "+m.Digest.String()[:15])
	}
	want := []string{
		"plugins/other:0.1.0 " + oci.ArtifactType + " " + got[0][len(got[0])-15:],
		"plugins/release-notes:1.2.0 " + oci.ArtifactType + " " + goldenManifest[:15],
		" application/vnd.dev.sigstore.bundle.v0.3+json " + goldenReferrer[:15],
	}
	if !slices.Equal(got, want) {
		t.Errorf("index.json entries\n%q\nwant\n%q", got, want)
	}

	path := filepath.Join(t.TempDir(), "airgap.tar")
	os.WriteFile(path, b, 0o644)
	back, err := oci.OpenLayout(ctx, path, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oci.Pull(ctx, back, "", oci.PullOptions{}); err == nil {
		t.Error("two plugins read without a digest")
	}
	if p, err := oci.Pull(ctx, back, "@"+goldenManifest, oci.PullOptions{}); err != nil || p.Package.Name != "release-notes" {
		t.Errorf("by digest: %v", err)
	}
}
