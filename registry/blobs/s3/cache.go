package s3

import (
	"bytes"
	"container/list"
	"io"
	"sync"
)

// blobCache keeps recently downloaded blobs in memory, least recently used
// out first, within a byte budget. Blobs never change under their digest,
// so a cached one is never stale; a hot artifact is then served without a
// request to the object store. Blobs larger than an eighth of the budget
// are not cached, so that one download cannot empty it.
//
// Where the system has memory files (Linux), a blob of at least
// memFileMin bytes is kept in one, so that serving it is what serving a
// file of the blob directory is: the kernel sends it (sendfile) instead
// of the process copying it into the socket, which halved the throughput.
type blobCache struct {
	mu     sync.Mutex
	budget int64
	used   int64
	order  *list.List // of *cachedBlob, most recent first
	byKey  map[string]*list.Element
}

type cachedBlob struct {
	key  string
	size int64
	mem  *memFile // the bytes in a memory file, or nil
	data []byte   // the bytes when mem is nil
}

// maxMemFiles bounds the descriptors the memory files take: a blob goes
// into one only when it is at least budget/maxMemFiles bytes.
const maxMemFiles = 256

func newBlobCache(budget int64) *blobCache {
	return &blobCache{budget: budget, order: list.New(), byKey: map[string]*list.Element{}}
}

// fits reports whether a blob of size would be cached.
func (c *blobCache) fits(size int64) bool { return c.budget > 0 && size <= c.budget/8 }

// get returns a reader of a cached blob and its size.
func (c *blobCache) get(key string) (io.ReadSeekCloser, int64, bool) {
	if c.budget <= 0 {
		return nil, 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return nil, 0, false
	}
	c.order.MoveToFront(e)
	b := e.Value.(*cachedBlob)
	if b.mem == nil {
		return nopCloser{bytes.NewReader(b.data)}, b.size, true
	}
	// Opened under the lock: evicting the blob closes its memory file,
	// and the descriptor's number could then name another file.
	f, err := b.mem.open()
	if err != nil {
		return nil, 0, false // the store serves it
	}
	return f, b.size, true
}

func (c *blobCache) put(key string, data []byte) {
	size := int64(len(data))
	if !c.fits(size) {
		return
	}
	b := &cachedBlob{key: key, size: size, data: data}
	if size >= c.budget/maxMemFiles {
		if m := newMemFile(data); m != nil {
			b.mem, b.data = m, nil
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[key]; ok {
		b.release()
		return
	}
	c.byKey[key] = c.order.PushFront(b)
	c.used += size
	for c.used > c.budget {
		c.drop(c.order.Back())
	}
}

// remove forgets a blob (the collector removed it).
func (c *blobCache) remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.drop(e)
	}
}

// drop removes an entry; c.mu is held. Readers opened before keep
// reading: the memory file lives until its last descriptor is closed.
func (c *blobCache) drop(e *list.Element) {
	b := c.order.Remove(e).(*cachedBlob)
	delete(c.byKey, b.key)
	c.used -= b.size
	b.release()
}

func (b *cachedBlob) release() {
	if b.mem != nil {
		b.mem.close()
	}
}

// nopCloser is a reader of a blob held in the process's memory.
type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }
