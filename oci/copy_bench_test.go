package oci_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"

	"github.com/plugkit/plugkit/internal/testservice"
	"github.com/plugkit/plugkit/oci"
)

// sign pushes into dst a signature of subject whose layer is text, as
// oras attach makes one: an empty config, one layer.
func sign(tb testing.TB, dst oci.Target, subject ocispec.Descriptor, text string) {
	tb.Helper()
	ctx := context.Background()
	push := func(d ocispec.Descriptor, b []byte) {
		if err := dst.Push(ctx, d, bytes.NewReader(b)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
			tb.Fatal(err)
		}
	}
	empty := ocispec.Descriptor{MediaType: "application/vnd.oci.empty.v1+json", Digest: digestOf([]byte("{}")), Size: 2}
	push(empty, []byte("{}"))
	layer := ocispec.Descriptor{MediaType: "application/vnd.example.signature", Digest: digestOf([]byte(text)), Size: int64(len(text))}
	push(layer, []byte(text))
	m, err := marshalJSON(ocispec.Manifest{Versioned: specsV2, MediaType: oci.ManifestMediaType, ArtifactType: layer.MediaType,
		Config: empty, Layers: []ocispec.Descriptor{layer}, Subject: &subject})
	if err != nil {
		tb.Fatal(err)
	}
	push(ocispec.Descriptor{MediaType: oci.ManifestMediaType, Digest: digestOf(m), Size: int64(len(m))}, m)
}

// Export of 100 small plugins, each signed, from one layout: what
// bench/oci.sh times, without the process around it.
func BenchmarkExportFromLayout(b *testing.B) {
	ctx := context.Background()
	dir := filepath.Join(b.TempDir(), "layout")
	w, err := oci.OpenLayout(ctx, dir, true)
	if err != nil {
		b.Fatal(err)
	}
	var items []oci.ExportItem
	for i := range 100 {
		a := manifestOnly(b, fmt.Sprintf(`{"$schema":"%s","name":"bench%d","version":"1.0.0"}`, schema, i))
		d := mustPush(b, w, a, fmt.Sprintf("p%d", i))
		sign(b, w, d, fmt.Sprintf("signature of bench%d", i))
		items = append(items, oci.ExportItem{Selector: "@" + d.Digest.String()})
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	src, err := oci.OpenLayout(ctx, dir, false)
	if err != nil {
		b.Fatal(err)
	}
	for i := range items {
		items[i].Source = src
	}
	tmp := b.TempDir()
	for b.Loop() {
		if _, err := oci.Export(ctx, io.Discard, items, tmp, oci.ExportOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// A plugin with 8 signatures in a registry on 127.0.0.1, exported, and
// copied to another repository: the referrers' round trips, which the
// walk overlaps.
func BenchmarkReferrersFromRegistry(b *testing.B) {
	ctx := context.Background()
	reg := testservice.StartRegistry(b)
	src := repository(b, reg, "plugins/signed")
	d := mustPush(b, src, exampleArtifact(b), "1.2.0")
	for i := range 8 {
		sign(b, src, d, fmt.Sprintf("signature %d", i))
	}
	b.Run("export", func(b *testing.B) {
		items := []oci.ExportItem{{Source: src, Selector: "1.2.0"}}
		for b.Loop() {
			c, err := oci.Export(ctx, io.Discard, items, b.TempDir(), oci.ExportOptions{})
			if err != nil || len(c[0].Referrers) != 8 {
				b.Fatalf("Export: %v, %+v", err, c)
			}
		}
	})
	b.Run("copy", func(b *testing.B) {
		n := 0
		for b.Loop() {
			n++
			c, err := oci.Copy(ctx, src, "1.2.0", repository(b, reg, fmt.Sprintf("copies/c%d", n)), "1.2.0", oci.PullOptions{})
			if err != nil || len(c.Referrers) != 8 {
				b.Fatalf("Copy: %v, %+v", err, c)
			}
		}
	})
}
