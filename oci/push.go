package oci

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry"
)

// Target is where plugins are written: a *Repository, a *Layout opened
// for writing, or any oras-go target (oras.Target).
type Target interface {
	content.Storage
	content.TagResolver
}

// Push uploads the config and layer (unless dst has them), then the
// manifest, tagged tag when tag is not empty, and returns the manifest's
// descriptor. A reader never sees a manifest whose blobs are missing.
func Push(ctx context.Context, dst Target, a *Artifact, tag string) (ocispec.Descriptor, error) {
	// The two blobs travel at once, as oras push sends them: on a
	// registry each is a HEAD, a POST and a PUT, and the config's three
	// round trips then cost nothing beside the layer's. The error is the
	// one of pushing them in turn: the config's first, and a config
	// refused abandons the layer.
	layerCtx, cancelLayer := context.WithCancel(ctx)
	defer cancelLayer()
	var cfgErr, layerErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		if cfgErr = pushIfMissing(ctx, dst, a.ConfigDescriptor, a.Config); cfgErr != nil {
			cancelLayer()
		}
	})
	wg.Go(func() { layerErr = pushIfMissing(layerCtx, dst, a.LayerDescriptor, a.Layer) })
	wg.Wait()
	if err := cmp.Or(cfgErr, layerErr); err != nil {
		return ocispec.Descriptor{}, err
	}
	desc := a.Descriptor
	if rp, ok := dst.(registry.ReferencePusher); ok && tag != "" {
		if err := rp.PushReference(ctx, desc, bytes.NewReader(a.Manifest), tag); err != nil {
			return ocispec.Descriptor{}, fmt.Errorf("push manifest: %w", err)
		}
		return desc, nil
	}
	if err := pushIfMissing(ctx, dst, desc, a.Manifest); err != nil {
		return ocispec.Descriptor{}, err
	}
	if tag != "" {
		if err := dst.Tag(ctx, desc, tag); err != nil {
			return ocispec.Descriptor{}, fmt.Errorf("tag %s: %w", tag, err)
		}
	}
	return desc, nil
}

func pushIfMissing(ctx context.Context, dst Target, desc ocispec.Descriptor, b []byte) error {
	ok, err := dst.Exists(ctx, desc)
	if err != nil {
		return fmt.Errorf("push %s: %w", desc.Digest, err)
	}
	if ok {
		return nil
	}
	// Another writer (Export copies plugins at once) may have stored the
	// same blob meanwhile: content addressed, it is the same.
	if err := dst.Push(ctx, desc, bytes.NewReader(b)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		return fmt.Errorf("push %s: %w", desc.Digest, err)
	}
	return nil
}
