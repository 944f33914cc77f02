package oci

import (
	"context"

	"oras.land/oras-go/v2/content"
)

// Store is an opened Reference: a *Repository or a *Layout. Close writes a
// layout's index.json; it does nothing for a registry. The methods but
// Close are those of oras-go's GraphTarget.
type Store interface {
	content.GraphStorage
	content.TagResolver
	Close() error
}

// Open opens the registry repository or the layout r names; write opens a
// layout for writing (creating the directory). The selector (r.Selector())
// is not resolved here.
func Open(ctx context.Context, r Reference, opts RemoteOptions, write bool) (Store, error) {
	if r.Layout {
		return OpenLayout(ctx, r.Path, write)
	}
	return NewRepository(r.Registry+"/"+r.Repository, opts)
}

// Close does nothing: a registry needs no closing.
func (r *Repository) Close() error { return nil }
