package registry

import (
	"context"
	"errors"
	"time"

	"github.com/plugkit/plugkit/registry/store"
)

// watchedCacheTTL is how long cached answers live when the store has a
// change feed: every write anywhere resets them, so the TTL is only a
// backstop.
const watchedCacheTTL = 10 * time.Minute

// The causes of a change feed loss, the cause label of
// plugkit_change_feed_losses_total.
const (
	// feedPingTimeout: the database did not answer the listener's
	// liveness check in time (a stalled server or link).
	feedPingTimeout = "ping_timeout"
	// feedConnection: the connection failed or the server closed it.
	feedConnection = "connection"
)

// watch follows the store's change feed until ctx ends: each change drops
// the caches it affects, and while the feed is down every cache is
// bypassed, so that a replica never answers from a cache that missed
// another replica's write. Losses and returns of the feed are logged, as
// is the first failure to connect of each outage.
func (s *Server) watch(ctx context.Context, w store.Watcher) {
	defer close(s.watchDone)
	listening := false
	var down time.Time // the first failure reported since the feed last listened
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
	}, func(err error) {
		// Bypass first, log and count, then move the gauge: a request
		// (or a test) that sees the gauge move also sees the caches
		// switched and the log line written.
		s.resolved.bypass(err != nil)
		if s.auth.db != nil {
			s.auth.db.cache.bypass(err != nil)
		}
		switch {
		case err == nil:
			if !down.IsZero() {
				s.log.Info("change feed back", "down_ms", time.Since(down).Milliseconds())
			}
			listening, down = true, time.Time{}
			s.metrics.feedUp.Set(1)
		case listening:
			cause := feedConnection
			if errors.Is(err, context.DeadlineExceeded) {
				cause = feedPingTimeout
			}
			s.metrics.feedLosses.WithLabelValues(cause).Inc()
			s.log.Warn("change feed lost, caches bypassed until it is back", "cause", cause, "err", err)
			listening, down = false, time.Now()
			s.metrics.feedUp.Set(0)
		default:
			s.log.Warn("change feed cannot connect, caches bypassed until it does", "err", err)
			if down.IsZero() {
				down = time.Now()
			}
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
