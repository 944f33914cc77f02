// Package blobs stores the registry's artifacts by content: each archive
// under its sha256 digest.
//
// Store is the one interface the handlers use, so that another blob store
// (an object store, say) can follow without touching them. Dir is the
// embedded implementation: a content-addressed directory.
package blobs

import (
	"context"
	"errors"
	"io"
)

// ErrNotFound is returned by Open for a digest that is not stored.
var ErrNotFound = errors.New("blob not found")

// ErrDigestMismatch is returned by Put when the bytes do not hash to the
// digest they are to be stored under.
var ErrDigestMismatch = errors.New("blob does not match its digest")

// Store holds immutable blobs keyed by "sha256:<hex>" digests. Put is
// idempotent and atomic: a blob is either absent or complete, never partial,
// whatever crashes in between.
type Store interface {
	// Put stores data under digest, which must be its sha256.
	Put(ctx context.Context, digest string, data []byte) error
	// Open returns the blob and its size. The caller closes it.
	Open(ctx context.Context, digest string) (io.ReadSeekCloser, int64, error)
}
