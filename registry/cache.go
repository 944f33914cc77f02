package registry

import (
	"context"
	"errors"
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
//
// The requests that miss one key at once share one read of the store
// (load): a reset empties the cache on every replica at each write
// anywhere, and without sharing, each request waiting on the key read the
// store on its own, which on a pool of four connections queued them and,
// on a cold pool, opened every connection at once.
type memo[K comparable, V any] struct {
	ttl     time.Duration // <= 0 disables the cache
	mu      sync.RWMutex
	m       map[K]memoEntry[V]
	flights map[K]*flight[V] // reads of the store in progress
	gen     uint64           // incremented by every reset
	off     bool             // bypassed: the change feed is down
}

type memoEntry[V any] struct {
	v     V
	until time.Time
}

// flight is one read of the store for a key, which the requests that miss
// the key in the same generation wait for.
type flight[V any] struct {
	done chan struct{} // closed when v and err are set
	gen  uint64
	v    V
	err  error
}

// lookup says where load found an answer.
type lookup int

const (
	lookupHit    lookup = iota // in the cache
	lookupMiss                 // from the store (or the cache is disabled)
	lookupBypass               // from the store, the cache being bypassed
)

func newMemo[K comparable, V any](ttl time.Duration) *memo[K, V] {
	return &memo[K, V]{ttl: ttl, m: map[K]memoEntry[V]{}, flights: map[K]*flight[V]{}}
}

func newResolveCache(ttl time.Duration) *resolveCache {
	return newMemo[distribution.ResolveQuery, []byte](ttl)
}

// get returns the cached answer of k, if any.
func (c *memo[K, V]) get(k K) (V, bool) {
	var zero V
	if c.ttl <= 0 {
		return zero, false
	}
	c.mu.RLock()
	e, ok := c.m[k]
	off := c.off
	c.mu.RUnlock()
	if off || !ok || time.Now().After(e.until) {
		return zero, false
	}
	return e.v, true
}

// load returns the answer of k: the cached one, or else read reads it from
// the store, once for the calls that miss k in one generation. A call only
// waits for a read begun in its own generation, so a request that arrives
// after a reset never gets an answer read before it; and while the cache
// is bypassed every call reads alone, as no reset would tell it of a
// write. The answer is kept unless an error came back or a reset happened
// since the read began. A call whose context ends stops waiting; one
// whose shared read failed because the reader's context ended (its client
// left) reads alone.
func (c *memo[K, V]) load(ctx context.Context, k K, read func(context.Context) (V, error)) (V, lookup, error) {
	if c.ttl <= 0 {
		v, err := read(ctx)
		return v, lookupMiss, err
	}
	if v, ok := c.get(k); ok {
		return v, lookupHit, nil
	}
	c.mu.Lock()
	if c.off {
		c.mu.Unlock()
		v, err := read(ctx)
		return v, lookupBypass, err
	}
	if f, ok := c.flights[k]; ok && f.gen == c.gen {
		c.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			var zero V
			return zero, lookupMiss, ctx.Err()
		}
		if f.err != nil && isContextError(f.err) && ctx.Err() == nil {
			v, err := read(ctx)
			return v, lookupMiss, err
		}
		return f.v, lookupMiss, f.err
	}
	f := &flight[V]{done: make(chan struct{}), gen: c.gen}
	c.flights[k] = f
	c.mu.Unlock()
	// Deferred, so that a panicking read still releases its waiters (with
	// an error: net/http recovers the panic of the request).
	f.err = errReadPanicked
	defer c.land(k, f)
	f.v, f.err = read(ctx)
	return f.v, lookupMiss, f.err
}

// errReadPanicked is what waiters get when the read they wait for panics.
var errReadPanicked = errors.New("registry: the shared store read panicked")

// land ends flight f of k: keeps its answer if it is still current, and
// wakes its waiters.
func (c *memo[K, V]) land(k K, f *flight[V]) {
	c.mu.Lock()
	if c.flights[k] == f {
		delete(c.flights, k)
	}
	if f.err == nil && !c.off && f.gen == c.gen {
		if len(c.m) >= maxCached {
			c.m = map[K]memoEntry[V]{}
		}
		c.m[k] = memoEntry[V]{v: f.v, until: time.Now().Add(c.ttl)}
	}
	c.mu.Unlock()
	close(f.done)
}

// isContextError reports whether err is a context's cancellation or
// deadline.
func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
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
