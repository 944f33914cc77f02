package registry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/plugkit/plugkit/registry/blobs"
	"github.com/plugkit/plugkit/registry/store"
)

// DefaultGCGrace is how long a blob no release refers to is kept before
// the collector removes it: far longer than any publish takes between
// writing its blob and committing its release.
const DefaultGCGrace = 24 * time.Hour

// GCOptions configure CollectGarbage.
type GCOptions struct {
	// Grace: only blobs unreferenced and unmodified for longer than this
	// are removed (default DefaultGCGrace).
	Grace time.Duration
	// DryRun reports what would be removed and removes nothing.
	DryRun bool
}

// GCReport is what a collection found and did.
type GCReport struct {
	// Blobs is how many blobs were examined.
	Blobs int `json:"blobs"`
	// Orphans are the digests of the unreferenced blobs past the grace
	// period: removed, or in a dry run, to be removed.
	Orphans []string `json:"orphans"`
	// OrphanBytes is their total size.
	OrphanBytes int64 `json:"orphan_bytes"`
	// Young counts unreferenced blobs still within the grace period.
	Young int `json:"young"`
	// DryRun is set when nothing was removed on purpose.
	DryRun bool `json:"dry_run"`
}

// ErrNoSweeper: the blob store cannot list and remove blobs.
var ErrNoSweeper = errors.New("registry: the blob store does not support collection")

// CollectGarbage removes the blobs that no release refers to and that are
// older than the grace period: what a publish leaves when it crashes
// between writing its blob and committing its release. A blob that a
// publish writes again during the collection is kept (see
// blobs.Sweeper). It is safe to run while servers publish to the same
// storage.
func CollectGarbage(ctx context.Context, st store.Store, b blobs.Store, opts GCOptions) (GCReport, error) {
	return collect(ctx, st, b, opts, func() func() { return func() {} })
}

// CollectGarbage runs the collector on the server's storage. Within this
// process it also waits for publishes between their blob write and their
// commit, so it never even looks at a blob in that window.
func (s *Server) CollectGarbage(ctx context.Context, opts GCOptions) (GCReport, error) {
	return collect(ctx, s.store, s.blobs, opts, func() func() {
		s.gcLock.Lock()
		return s.gcLock.Unlock
	})
}

// RunGC collects garbage every interval until ctx ends, logging each
// collection that found something and each failure.
func (s *Server) RunGC(ctx context.Context, interval time.Duration, opts GCOptions) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rep, err := s.CollectGarbage(ctx, opts)
		switch {
		case err != nil && ctx.Err() == nil:
			s.log.Error("garbage collection failed", "err", err)
		case len(rep.Orphans) > 0:
			s.log.Info("garbage collected", "blobs", rep.Blobs, "removed", len(rep.Orphans), "bytes", rep.OrphanBytes)
		}
	}
}

// collect is the collector; lock excludes publishes while one blob is
// judged and removed, and returns its unlock.
func collect(ctx context.Context, st store.Store, b blobs.Store, opts GCOptions, lock func() func()) (GCReport, error) {
	rep := GCReport{Orphans: []string{}, DryRun: opts.DryRun}
	sw, ok := b.(blobs.Sweeper)
	if !ok {
		return rep, ErrNoSweeper
	}
	grace := opts.Grace
	if grace <= 0 {
		grace = DefaultGCGrace
	}
	cutoff := time.Now().Add(-grace)
	err := sw.Walk(ctx, func(info blobs.Info) error {
		rep.Blobs++
		unlock := lock()
		defer unlock()
		used, err := st.HasArtifact(ctx, info.Digest)
		switch {
		case err != nil:
			return fmt.Errorf("registry: gc: %s: %w", info.Digest, err)
		case used:
			return nil
		case !info.ModTime.Before(cutoff):
			rep.Young++
			return nil
		case opts.DryRun:
			rep.Orphans = append(rep.Orphans, info.Digest)
			rep.OrphanBytes += info.Size
			return nil
		}
		removed, err := sw.RemoveIfOlder(ctx, info.Digest, cutoff)
		if err != nil {
			return fmt.Errorf("registry: gc: %s: %w", info.Digest, err)
		}
		if removed {
			rep.Orphans = append(rep.Orphans, info.Digest)
			rep.OrphanBytes += info.Size
		} else {
			rep.Young++
		}
		return nil
	})
	return rep, err
}
