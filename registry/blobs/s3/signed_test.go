package s3

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a transport that notes each request it sends.
type recorder struct {
	mu   sync.Mutex
	reqs []*http.Request
	tr   http.RoundTripper
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.tr.RoundTrip(req)
}

// gets returns the GETs of key sent since the last call, as "signed URL"
// (a presigned URL, its query) or "header" (minio-go's own signing), with
// their Range.
func (r *recorder) gets(key string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, q := range r.reqs {
		if q.Method != http.MethodGet || !strings.HasSuffix(q.URL.Path, key) {
			continue
		}
		how := "header"
		if q.URL.Query().Get("X-Amz-Signature") != "" && q.Header.Get("Authorization") == "" {
			how = "signed " + q.URL.RawQuery
		}
		out = append(out, how+" range="+q.Header.Get("Range"))
	}
	r.reqs = nil
	return out
}

func readAll(t *testing.T, s *Store, digest string) []byte {
	t.Helper()
	f, size, err := s.Open(context.Background(), digest)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil || int64(len(b)) != size {
		t.Fatalf("read %d of %d bytes: %v", len(b), size, err)
	}
	return b
}

// TestSignedGet: downloads are GETs of one presigned URL, signed once and
// reused, also for a ranged reopen; a URL the server refuses is dropped
// and the download goes through minio-go's own signing, whole and right.
func TestSignedGet(t *testing.T) {
	rec := &recorder{tr: http.DefaultTransport.(*http.Transport).Clone()}
	s, _, _ := openWith(t, "/p", Options{CacheBytes: -1, Transport: rec})
	data, digest := blob(5)
	if err := s.Put(context.Background(), digest, data); err != nil {
		t.Fatal(err)
	}
	key, _ := s.key(digest)
	rec.gets(key)
	for range 2 {
		if !bytes.Equal(readAll(t, s, digest), data) {
			t.Fatal("bytes differ")
		}
	}
	got := rec.gets(key)
	if len(got) != 2 || got[0] != got[1] || !strings.HasPrefix(got[0], "signed ") || !strings.HasSuffix(got[0], " range=") {
		t.Fatalf("GETs: %q, want the same presigned URL twice", got)
	}
	// A seek away from the open GET reopens at the offset, same URL.
	f, _, err := s.Open(context.Background(), digest)
	if err != nil {
		t.Fatal(err)
	}
	f.Seek(100, io.SeekStart)
	part := make([]byte, 50)
	if _, err := io.ReadFull(f, part); err != nil || !bytes.Equal(part, data[100:150]) {
		t.Fatalf("ranged read: %q %v", part, err)
	}
	f.Close()
	signed := strings.TrimSuffix(got[0], " range=")
	if got := rec.gets(key); fmt.Sprint(got) != fmt.Sprint([]string{signed + " range=", signed + " range=bytes=100-"}) {
		t.Fatalf("GETs of a ranged read: %q", got)
	}
	// A URL the server refuses (a tampered signature): minio-go serves
	// the download, and the next one signs a new URL.
	u, _ := s.signed.get(key, time.Now())
	s.signed.put(key, strings.Replace(u, "X-Amz-Signature=", "X-Amz-Signature=0", 1), time.Now().Add(time.Minute))
	if !bytes.Equal(readAll(t, s, digest), data) {
		t.Fatal("bytes differ after a refused URL")
	}
	if got := rec.gets(key); len(got) != 2 || !strings.HasPrefix(got[0], "signed ") || got[1] != "header range=" {
		t.Fatalf("GETs after a refused URL: %q, want the signed one then minio-go's", got)
	}
	readAll(t, s, digest)
	if got := rec.gets(key); len(got) != 1 || !strings.HasPrefix(got[0], "signed ") {
		t.Fatalf("GETs after the refused URL was dropped: %q", got)
	}
}

// TestSignedURLs: a URL is reused until its time, and the URLs kept are
// bounded whatever the number of keys.
func TestSignedURLs(t *testing.T) {
	var c signedURLs
	now := time.Now()
	c.put("k", "u", now.Add(time.Minute))
	if u, ok := c.get("k", now); !ok || u != "u" {
		t.Fatalf("get: %q %v", u, ok)
	}
	if _, ok := c.get("k", now.Add(time.Minute)); ok {
		t.Fatal("a URL was reused past its time")
	}
	c.drop("k")
	if _, ok := c.get("k", now); ok {
		t.Fatal("a dropped URL was reused")
	}
	for i := range 3 * maxSigned {
		c.put(fmt.Sprint(i), "u", now.Add(time.Minute))
		if len(c.urls) > maxSigned {
			t.Fatalf("%d URLs kept, bound %d", len(c.urls), maxSigned)
		}
	}
}
