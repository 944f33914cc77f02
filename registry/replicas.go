package registry

import (
	"context"
	"time"

	"github.com/plugkit/plugkit/registry/store"
)

// watchedCacheTTL is how long cached answers live when the store has a
// change feed: every write anywhere resets them, so the TTL is only a
// backstop.
const watchedCacheTTL = 10 * time.Minute

// watch follows the store's change feed until ctx ends: each change drops
// the caches it affects, and while the feed is down every cache is
// bypassed, so that a replica never answers from a cache that missed
// another replica's write.
func (s *Server) watch(ctx context.Context, w store.Watcher) {
	defer close(s.watchDone)
	w.Watch(ctx, func(k store.ChangeKind) {
		s.metrics.invalidations.WithLabelValues(string(k)).Inc()
		switch k {
		case store.ChangeTokens:
			if s.auth.db != nil {
				s.auth.db.cache.reset()
			}
		default:
			s.resolved.reset()
		}
	}, func(up bool) {
		// Bypass first, then count: a request that sees the gauge at 0
		// also sees the caches off.
		s.resolved.bypass(!up)
		if s.auth.db != nil {
			s.auth.db.cache.bypass(!up)
		}
		if up {
			s.metrics.feedUp.Set(1)
		} else {
			s.metrics.feedUp.Set(0)
			s.metrics.feedLosses.Inc()
		}
	})
}

// Close stops what New started in the background (the change feed's
// listener). It does not close the store.
func (s *Server) Close() error {
	if s.stopWatch != nil {
		s.stopWatch()
		<-s.watchDone
	}
	return nil
}
