package oci_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/plugkit/plugkit/oci"
)

// refusingTarget is a writable layout that refuses to store the blobs
// named in refuse, each with its own error.
type refusingTarget struct {
	oci.Target
	refuse map[digest.Digest]error
}

func (r refusingTarget) Push(ctx context.Context, desc ocispec.Descriptor, rd io.Reader) error {
	if err := r.refuse[desc.Digest]; err != nil {
		return err
	}
	return r.Target.Push(ctx, desc, rd)
}

// TestPushRefusedBlob: the config and the layer are pushed at once, but a
// refusal is reported as pushing them in turn reports it (the config's
// first), and the manifest is never pushed after a blob failed.
func TestPushRefusedBlob(t *testing.T) {
	ctx := context.Background()
	a := exampleArtifact(t)
	errConfig, errLayer := errors.New("config refused"), errors.New("layer refused")
	for _, c := range []struct {
		name   string
		refuse map[digest.Digest]error
		want   error
	}{
		{"both", map[digest.Digest]error{a.ConfigDescriptor.Digest: errConfig, a.LayerDescriptor.Digest: errLayer}, errConfig},
		{"layer", map[digest.Digest]error{a.LayerDescriptor.Digest: errLayer}, errLayer},
		{"config", map[digest.Digest]error{a.ConfigDescriptor.Digest: errConfig}, errConfig},
	} {
		t.Run(c.name, func(t *testing.T) {
			lay, err := oci.OpenLayout(ctx, filepath.Join(t.TempDir(), "layout"), true)
			if err != nil {
				t.Fatal(err)
			}
			defer lay.Close()
			if _, err := oci.Push(ctx, refusingTarget{lay, c.refuse}, a, "1.2.0"); !errors.Is(err, c.want) {
				t.Errorf("Push = %v, want %v", err, c.want)
			}
			if ok, err := lay.Exists(ctx, a.Descriptor); ok || err != nil {
				t.Errorf("the manifest was pushed after a blob was refused (%v)", err)
			}
			if _, err := lay.Resolve(ctx, "1.2.0"); err == nil {
				t.Error("the tag was set after a blob was refused")
			}
		})
	}
}
