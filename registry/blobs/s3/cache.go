package s3

import (
	"container/list"
	"sync"
)

// blobCache keeps recently downloaded blobs in memory, least recently used
// out first, within a byte budget. Blobs never change under their digest,
// so a cached one is never stale; a hot artifact is then served without a
// request to the object store. Blobs larger than an eighth of the budget
// are not cached, so that one download cannot empty it.
type blobCache struct {
	mu     sync.Mutex
	budget int64
	used   int64
	order  *list.List // of *cachedBlob, most recent first
	byKey  map[string]*list.Element
}

type cachedBlob struct {
	key  string
	data []byte
}

func newBlobCache(budget int64) *blobCache {
	return &blobCache{budget: budget, order: list.New(), byKey: map[string]*list.Element{}}
}

// fits reports whether a blob of size would be cached.
func (c *blobCache) fits(size int64) bool { return c.budget > 0 && size <= c.budget/8 }

func (c *blobCache) get(key string) ([]byte, bool) {
	if c.budget <= 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cachedBlob).data, true
}

func (c *blobCache) put(key string, data []byte) {
	if !c.fits(int64(len(data))) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[key]; ok {
		return
	}
	c.byKey[key] = c.order.PushFront(&cachedBlob{key: key, data: data})
	c.used += int64(len(data))
	for c.used > c.budget {
		last := c.order.Back()
		b := c.order.Remove(last).(*cachedBlob)
		delete(c.byKey, b.key)
		c.used -= int64(len(b.data))
	}
}

// remove forgets a blob (the collector removed it).
func (c *blobCache) remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.used -= int64(len(c.order.Remove(e).(*cachedBlob).data))
		delete(c.byKey, key)
	}
}
