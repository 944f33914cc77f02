package oci_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/oci"
)

// exportBytes exports items into memory.
func exportBytes(t *testing.T, items []oci.ExportItem) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := oci.Export(context.Background(), &b, items, t.TempDir(), oci.ExportOptions{}); err != nil {
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

// inLayer names the hostile artifacts whose fault lies inside the layer's
// archive, or between it and the config: only a reader that unpacks the
// layer sees it. Export without Check carries them; everything else
// hostileArtifacts holds it refuses.
var inLayer = map[string]bool{
	"layer unpacking over a limit":             true,
	"layer rooted elsewhere":                   true,
	"layer without a root":                     true,
	"layer with a second root":                 true,
	"config name disagrees":                    true,
	"config version disagrees":                 true,
	"config version null, plugin.json has one": true,
	"config schema disagrees":                  true,
	"symbolic link in the layer":               true,
	"rejected plugin inside":                   true,
}

// isRefusal reports whether err is the refusal want names.
func isRefusal(err, want error) bool {
	if _, ok := want.(*agentplugin.RejectedError); ok {
		var rej *agentplugin.RejectedError
		return errors.As(err, &rej)
	}
	return errors.Is(err, want)
}

// Export checks what it carries without unpacking layers: a manifest,
// config or layer that lies about its size or digest, wrong media types,
// an index, a malformed config and every limit are refused by default; a
// layer whose archive is hostile (a link entry, entries outside NAME/, a
// rejected plugin) is carried, and refused with Check and by whoever reads
// the tar.
func TestExportChecksWithoutUnpacking(t *testing.T) {
	a := exampleArtifact(t)
	ctx := context.Background()
	seen := 0
	for _, c := range hostileArtifacts(t) {
		t.Run(c.name, func(t *testing.T) {
			l := newLayout(t)
			c.build(l, a)
			lay, err := l.tryOpen()
			if err != nil {
				if inLayer[c.name] || !isRefusal(err, c.want) {
					t.Fatalf("open: %v", err)
				}
				return // refused before any export
			}
			items := []oci.ExportItem{{Source: lay, Selector: "x", Name: "x"}}
			if _, err := oci.Export(ctx, io.Discard, items, t.TempDir(), oci.ExportOptions{PullOptions: c.opts, Check: true}); !isRefusal(err, c.want) {
				t.Errorf("Export with Check = %v, want %v", err, c.want)
			}
			var b bytes.Buffer
			copied, err := oci.Export(ctx, &b, items, t.TempDir(), oci.ExportOptions{PullOptions: c.opts})
			if !inLayer[c.name] {
				if !isRefusal(err, c.want) {
					t.Fatalf("Export = %v, want %v", err, c.want)
				}
				return
			}
			seen++
			if err != nil {
				t.Fatalf("Export = %v, want the artifact carried", err)
			}
			if copied[0].Plugin.Package != nil || copied[0].Plugin.Layer != nil || copied[0].Plugin.PluginConfig.Name == "" {
				t.Errorf("Export without Check returned %+v", copied[0].Plugin)
			}
			path := filepath.Join(t.TempDir(), "airgap.tar")
			os.WriteFile(path, b.Bytes(), 0o644)
			back, err := oci.OpenLayout(ctx, path, false)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := oci.Pull(ctx, back, "x", c.opts); !isRefusal(err, c.want) {
				t.Errorf("Pull of the exported tar = %v, want %v", err, c.want)
			}
		})
	}
	if seen != len(inLayer) {
		t.Errorf("%d of the %d cases in inLayer ran: a name changed", seen, len(inLayer))
	}
}

// referrer lists in l, untagged, a signature of subject whose one layer
// is layer, and its empty config.
func referrer(l *layoutBuilder, subject, layer ocispec.Descriptor) {
	l.manifest(oci.ManifestMediaType, map[string]any{
		"schemaVersion": 2, "mediaType": oci.ManifestMediaType, "artifactType": "application/vnd.example.signature",
		"config": l.blob("application/vnd.oci.empty.v1+json", []byte("{}")), "layers": []ocispec.Descriptor{layer}, "subject": subject,
	}, "")
}

// The same digest listed with two sizes (here a referrer's layer that is
// also the plugin's layer, with a size one less) is refused: one of the
// descriptors lies, and the blob is written once.
func TestExportRefusesOneDigestOfTwoSizes(t *testing.T) {
	a := exampleArtifact(t)
	l := newLayout(t)
	cfg, layer := goodBlobs(l, a)
	plugin := l.manifest(oci.ManifestMediaType, pluginManifest(cfg, layer), "x")
	short := layer
	short.Size--
	referrer(l, plugin, short)
	items := []oci.ExportItem{{Source: l.open(), Selector: "x"}}
	for _, check := range []bool{false, true} {
		if _, err := oci.Export(context.Background(), io.Discard, items, t.TempDir(), oci.ExportOptions{Check: check}); !errors.Is(err, oci.ErrDescriptor) {
			t.Errorf("Check %v: Export = %v, want ErrDescriptor", check, err)
		}
	}
}

// A referrer's blob is checked as the plugin's are: its content must be
// what its descriptor says, though nothing reads it before the tar.
func TestExportRefusesReferrerLies(t *testing.T) {
	a := exampleArtifact(t)
	for _, lie := range []string{"digest", "size"} {
		t.Run(lie, func(t *testing.T) {
			l := newLayout(t)
			cfg, layer := goodBlobs(l, a)
			plugin := l.manifest(oci.ManifestMediaType, pluginManifest(cfg, layer), "x")
			sig := l.blob("application/vnd.example.signature", []byte("signature of release-notes"))
			if lie == "digest" {
				l.blobAt(sig.Digest, []byte("signature of release-nOtes"))
			} else {
				sig.Size += 3
			}
			referrer(l, plugin, sig)
			items := []oci.ExportItem{{Source: l.open(), Selector: "x"}}
			for _, check := range []bool{false, true} {
				if _, err := oci.Export(context.Background(), io.Discard, items, t.TempDir(), oci.ExportOptions{Check: check}); !errors.Is(err, oci.ErrDescriptor) {
					t.Errorf("Check %v: Export = %v, want ErrDescriptor", check, err)
				}
			}
		})
	}
}

// cancelingWriter cancels its context at the first byte written.
type cancelingWriter struct{ cancel context.CancelFunc }

func (w cancelingWriter) Write(p []byte) (int, error) {
	w.cancel()
	return len(p), nil
}

// An export interrupted while it writes the tar stops at the next blob
// with the context's error, the tar unfinished.
func TestExportStopsWhenInterrupted(t *testing.T) {
	golden, _ := oci.OpenLayout(context.Background(), signedTar, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := oci.Export(ctx, cancelingWriter{cancel}, []oci.ExportItem{{Source: golden, Selector: "1.2.0"}}, t.TempDir(), oci.ExportOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Export = %v, want context.Canceled", err)
	}
}

// An export from layouts stages nothing on disk: the blobs go from the
// layouts' files into the tar, so that a directory for staging is never
// made (here it does not even exist).
func TestExportFromLayoutsStagesNothing(t *testing.T) {
	golden, _ := oci.OpenLayout(context.Background(), signedTar, false)
	items := []oci.ExportItem{{Source: golden, Selector: "1.2.0"}, {Source: otherPlugin(t), Selector: "0.1.0"}}
	for _, check := range []bool{false, true} {
		if _, err := oci.Export(context.Background(), io.Discard, items, filepath.Join(t.TempDir(), "missing"), oci.ExportOptions{Check: check}); err != nil {
			t.Errorf("Check %v: %v", check, err)
		}
	}
}

// Export walks a layout's referrers as Copy (oras-go) does: transitively
// (a countersignature of the signature comes along), a foreign layer left
// out (the layout lacks it), the same referrers found and the same blobs
// carried.
func TestExportCarriesReferrersAsCopy(t *testing.T) {
	ctx := context.Background()
	a := exampleArtifact(t)
	l := newLayout(t)
	cfg, layer := goodBlobs(l, a)
	plugin := l.manifest(oci.ManifestMediaType, pluginManifest(cfg, layer), "x")
	sig := l.manifest(oci.ManifestMediaType, map[string]any{
		"schemaVersion": 2, "mediaType": oci.ManifestMediaType, "artifactType": "application/vnd.example.signature",
		"config": l.blob("application/vnd.oci.empty.v1+json", []byte("{}")), "subject": plugin,
		"layers": []ocispec.Descriptor{
			l.blob("application/vnd.example.signature", []byte("signature of release-notes")),
			{MediaType: ocispec.MediaTypeImageLayerNonDistributableGzip, Digest: digestOf([]byte("elsewhere")), Size: 9}, //nolint:staticcheck // what oras-go skips
		},
	}, "")
	referrer(l, sig, l.blob("application/vnd.example.signature", []byte("countersignature")))
	src := l.open()

	var b bytes.Buffer
	exported, err := oci.Export(ctx, &b, []oci.ExportItem{{Source: src, Selector: "x"}}, t.TempDir(), oci.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var inTar []string
	for tr := tar.NewReader(&b); ; {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := strings.CutPrefix(h.Name, "blobs/sha256/"); ok {
			inTar = append(inTar, d)
		}
	}

	dir := filepath.Join(t.TempDir(), "copy")
	copied := copyToLayout(t, src, "x", dir, "")
	var inCopy []string
	entries, _ := os.ReadDir(filepath.Join(dir, "blobs", "sha256"))
	for _, e := range entries {
		inCopy = append(inCopy, e.Name())
	}

	if got, want := exported[0].Referrers, copied.Referrers; len(got) != 2 || !reflect.DeepEqual(got, want) {
		t.Errorf("referrers\n%v\nwant (as Copy)\n%v", got, want)
	}
	if len(inTar) != 8 || !slices.Equal(inTar, inCopy) {
		t.Errorf("blobs in the tar\n%v\nwant (as Copy)\n%v", inTar, inCopy)
	}
}
