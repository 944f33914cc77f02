package s3

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"testing"
)

// cacheBlob is n bytes that tell which blob they are.
func cacheBlob(i, n int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("%08d", i)), n/8)
}

func readCached(t *testing.T, c *blobCache, key string) ([]byte, io.ReadSeekCloser) {
	t.Helper()
	r, size, ok := c.get(key)
	if !ok {
		t.Fatalf("%s is not cached", key)
	}
	b, err := io.ReadAll(r)
	if err != nil || int64(len(b)) != size {
		t.Fatalf("%s: %d of %d bytes, %v", key, len(b), size, err)
	}
	return b, r
}

// TestCacheServesFiles: on Linux a cached blob of some size is served as
// an *os.File, so that net/http sends it with sendfile as it sends the
// blob directory's files; its memory file is sealed, each reader has its
// own offset, and a reader opened before the blob is evicted still reads
// the blob's bytes, whatever files are opened since.
func TestCacheServesFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("memory files are Linux only; elsewhere blobs stay in the heap (TestCache)")
	}
	c := newBlobCache(8 << 20)
	want := cacheBlob(1, 512<<10)
	c.put("a", want)
	r1, _, _ := c.get("a")
	f, ok := r1.(*os.File)
	if !ok {
		t.Fatalf("a cached 512 KiB blob is a %T, not an *os.File", r1)
	}
	if _, err := f.Write([]byte("x")); err == nil {
		t.Fatal("a cached blob's file is writable")
	}
	got, r2 := readCached(t, c, "a")
	if !bytes.Equal(got, want) {
		t.Fatal("the cached bytes differ")
	}
	r2.Close()
	// r1 has its own offset (still 0), and outlives the eviction of "a".
	c.remove("a")
	for i := range 20 {
		c.put(fmt.Sprint("b", i), cacheBlob(100+i, 512<<10))
	}
	if got, err := io.ReadAll(r1); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("a reader of an evicted blob read other bytes: %v", err)
	}
	r1.Close()
	// Small blobs stay in the heap: they would cost a descriptor each.
	c.put("small", cacheBlob(2, 1024))
	if r, _, _ := c.get("small"); r == nil {
		t.Fatal("a small blob is not cached")
	} else if _, isFile := r.(*os.File); isFile {
		t.Fatal("a 1 KiB blob took a memory file")
	}
}

// TestCacheConcurrentEviction reads blobs while others push them out:
// every read gets the bytes of the blob it asked for (a descriptor number
// reused by another memory file must never be opened in its place), and
// the budget holds.
func TestCacheConcurrentEviction(t *testing.T) {
	c := newBlobCache(1 << 20) // room for eight 128 KiB blobs
	const blobs, size = 24, 128 << 10
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				n := (i*7 + w) % blobs
				key, want := fmt.Sprint("k", n), cacheBlob(n, size)
				c.put(key, want)
				r, _, ok := c.get(key)
				if !ok {
					continue // already pushed out by another writer
				}
				got, err := io.ReadAll(r)
				r.Close()
				if err != nil || !bytes.Equal(got, want) {
					errs <- fmt.Errorf("%s: read other bytes (%v)", key, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if c.used > c.budget || c.order.Len() != len(c.byKey) {
		t.Fatalf("cache holds %d bytes in %d entries (%d keys), budget %d", c.used, c.order.Len(), len(c.byKey), c.budget)
	}
}
