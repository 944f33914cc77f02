package registry

import (
	"sync"
	"time"

	"github.com/plugkit/plugkit/distribution"
)

// maxCached bounds the resolve cache and the published-digest set; past
// it they start afresh, so that a client asking for many distinct
// releases cannot grow them.
const maxCached = 10_000

// resolveCache keeps encoded resolve responses. Resolve is the hot path of
// every install and update, and its answer only changes when a server
// publishes, moves a channel or yanks. This server's writes reset the cache
// at once. Other servers' writes reach it through the store's change feed
// (store.Watcher, PostgreSQL's LISTEN/NOTIFY) when there is one; while the
// feed is down the cache is bypassed, so no answer is ever older than the
// feed's delay. Without a feed, the TTL bounds staleness.
//
// An answer read from the store is only kept if no reset happened since
// the lookup that missed (the generation is unchanged): a write committed
// while the store was being read must not leave the old answer cached.
type resolveCache = memo[distribution.ResolveQuery, []byte]

// memo is a bounded map of answers with a TTL, reset as a whole, and
// bypassed while the change feed that would reset it is down. It serves
// the resolve cache and the database token cache.
type memo[K comparable, V any] struct {
	ttl time.Duration // <= 0 disables the cache
	mu  sync.RWMutex
	m   map[K]memoEntry[V]
	gen uint64 // incremented by every reset
	off bool   // bypassed: the change feed is down
}

type memoEntry[V any] struct {
	v     V
	until time.Time
}

func newMemo[K comparable, V any](ttl time.Duration) *memo[K, V] {
	return &memo[K, V]{ttl: ttl, m: map[K]memoEntry[V]{}}
}

func newResolveCache(ttl time.Duration) *resolveCache {
	return newMemo[distribution.ResolveQuery, []byte](ttl)
}

// get returns the cached answer of k, if any, and the generation to hand
// to put.
func (c *memo[K, V]) get(k K) (V, uint64, bool) {
	var zero V
	if c.ttl <= 0 {
		return zero, 0, false
	}
	c.mu.RLock()
	e, ok := c.m[k]
	gen, off := c.gen, c.off
	c.mu.RUnlock()
	if off || !ok || time.Now().After(e.until) {
		return zero, gen, false
	}
	return e.v, gen, true
}

// put caches v for k, unless the cache was reset since the get that
// returned gen, or is bypassed.
func (c *memo[K, V]) put(k K, v V, gen uint64) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off || gen != c.gen {
		return
	}
	if len(c.m) >= maxCached {
		c.m = map[K]memoEntry[V]{}
	}
	c.m[k] = memoEntry[V]{v: v, until: time.Now().Add(c.ttl)}
}

// reset forgets everything; every write of the catalog calls it.
func (c *memo[K, V]) reset() {
	c.mu.Lock()
	c.m = map[K]memoEntry[V]{}
	c.gen++
	c.mu.Unlock()
}

// bypass turns the cache off (the change feed is down) or back on; either
// way it starts empty.
func (c *memo[K, V]) bypass(off bool) {
	c.mu.Lock()
	c.m = map[K]memoEntry[V]{}
	c.gen++
	c.off = off
	c.mu.Unlock()
}

// digestSet remembers digests known to be published. A digest never stops
// being published (releases are immutable and never deleted; yanked ones
// stay downloadable), so a remembered answer is never stale, and artifact
// downloads skip the database after the first. Unknown digests still ask
// the store, so another server's publishes are seen at once.
type digestSet struct {
	mu sync.RWMutex
	m  map[string]struct{}
}

func newDigestSet() *digestSet { return &digestSet{m: map[string]struct{}{}} }

func (d *digestSet) has(digest string) bool {
	d.mu.RLock()
	_, ok := d.m[digest]
	d.mu.RUnlock()
	return ok
}

func (d *digestSet) add(digest string) {
	d.mu.Lock()
	if len(d.m) >= maxCached {
		d.m = map[string]struct{}{}
	}
	d.m[digest] = struct{}{}
	d.mu.Unlock()
}
