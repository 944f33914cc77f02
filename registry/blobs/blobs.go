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
	"time"
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
	// Put stores data under digest, which must be its sha256. Putting a
	// blob that exists refreshes its modification time, which the
	// collector reads as "in use" (see Sweeper).
	Put(ctx context.Context, digest string, data []byte) error
	// Open returns the blob and its size. The caller closes it.
	Open(ctx context.Context, digest string) (io.ReadSeekCloser, int64, error)
}

// CondPutter is implemented by stores that can write a blob before the
// caller has decided whether to keep it, so that the decision (a database
// round trip, say) overlaps the write rather than preceding it.
type CondPutter interface {
	// PutIf is Put, except that the blob becomes visible only if keep
	// returns nil; otherwise PutIf returns keep's error and leaves no
	// blob that was not there before. keep is called at most once.
	PutIf(ctx context.Context, digest string, data []byte, keep func() error) error
}

// PutIf stores data under digest, as s.Put does, if keep returns nil, and
// returns keep's error otherwise. A store that is a CondPutter writes
// while keep decides; any other is asked to Put only once keep has said
// yes.
func PutIf(ctx context.Context, s Store, digest string, data []byte, keep func() error) error {
	if c, ok := s.(CondPutter); ok {
		return c.PutIf(ctx, digest, data, keep)
	}
	if err := keep(); err != nil {
		return err
	}
	return s.Put(ctx, digest, data)
}

// Info describes one stored blob.
type Info struct {
	Digest  string
	Size    int64
	ModTime time.Time
}

// Sweeper is what a Store offers the orphan collector: listing every blob,
// and removing one only while it is still older than a cutoff. Removal is
// conditional because a publish may Put the same bytes again (refreshing
// the blob) between the collector's look and its removal; that blob must
// survive.
type Sweeper interface {
	// Walk calls fn for every blob, in no particular order, until fn
	// returns an error.
	Walk(ctx context.Context, fn func(Info) error) error
	// RemoveIfOlder removes the blob if its modification time is before
	// cutoff, and reports whether it did.
	RemoveIfOlder(ctx context.Context, digest string, cutoff time.Time) (bool, error)
}

// Presigner is implemented by stores whose blobs a client can download
// without the registry (object storage): the registry may then redirect an
// artifact download there instead of streaming it.
type Presigner interface {
	// Presign returns a URL that serves the blob for a limited time.
	Presign(ctx context.Context, digest string) (string, error)
}

// Sender is implemented by the readers Open returns that can write their
// next bytes to a writer better than a copy through a buffer can: the S3
// store's, from a plain-http endpoint, hands the writer the connection
// the bytes arrive on, which net/http splices into the client's.
type Sender interface {
	// SendTo writes the next n bytes to w and returns how many it
	// wrote. It returns errors.ErrUnsupported, having written nothing,
	// when it cannot do better than a copy.
	SendTo(w io.Writer, n int64) (int64, error)
}
