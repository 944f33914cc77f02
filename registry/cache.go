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
// every install and update, and its answer only changes when this server
// publishes, moves a channel or yanks — each of which resets the cache. The
// TTL bounds staleness when several servers share one database (PostgreSQL
// later), where another server's writes cannot reset this cache.
type resolveCache struct {
	ttl time.Duration // <= 0 disables the cache
	mu  sync.RWMutex
	m   map[distribution.ResolveQuery]cachedBody
}

type cachedBody struct {
	body  []byte
	until time.Time
}

func newResolveCache(ttl time.Duration) *resolveCache {
	return &resolveCache{ttl: ttl, m: map[distribution.ResolveQuery]cachedBody{}}
}

func (c *resolveCache) get(q distribution.ResolveQuery) ([]byte, bool) {
	if c.ttl <= 0 {
		return nil, false
	}
	c.mu.RLock()
	e, ok := c.m[q]
	c.mu.RUnlock()
	if !ok || time.Now().After(e.until) {
		return nil, false
	}
	return e.body, true
}

func (c *resolveCache) put(q distribution.ResolveQuery, body []byte) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCached {
		c.m = map[distribution.ResolveQuery]cachedBody{}
	}
	c.m[q] = cachedBody{body: body, until: time.Now().Add(c.ttl)}
}

// reset forgets everything; every write of the catalog calls it.
func (c *resolveCache) reset() {
	c.mu.Lock()
	c.m = map[distribution.ResolveQuery]cachedBody{}
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
