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

	"github.com/plugkit/plugkit/archive"
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

// TestPresignReuse: within the window, Presign hands out the URL it
// signed before for the same blob, and the URL downloads the blob; at the
// window's end it signs a new one; other blobs get their own URLs, apart
// from the store's own; the URLs kept are bounded; a failed signature
// keeps nothing, and a cancelled context leaves no URL that fails.
func TestPresignReuse(t *testing.T) {
	s, _, _ := open(t, "")
	ctx := context.Background()
	now := time.Now()
	s.redirects.now = func() time.Time { return now }
	if s.redirects.reuse != time.Minute {
		t.Fatalf("window %v with the default expiry, want a minute", s.redirects.reuse)
	}
	a, da := blob(20)
	b, db := blob(21)
	for d, data := range map[string][]byte{da: a, db: b} {
		if err := s.Put(ctx, d, data); err != nil {
			t.Fatal(err)
		}
	}
	presign := func(digest string) string {
		t.Helper()
		u, err := s.Presign(ctx, digest)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	key, _ := s.key(da)
	u := presign(da)
	until := now.Add(time.Minute)
	// Two URLs signed in the same second read the same: that the URL was
	// not signed again shows in the time it is kept until.
	now = now.Add(time.Minute - time.Nanosecond)
	if again := presign(da); again != u || !s.redirects.urls[key].until.Equal(until) {
		t.Fatalf("within the window: %s kept until %v, want %s kept until %v", again, s.redirects.urls[key].until, u, until)
	}
	fetch(t, u, a)
	ub := presign(db)
	if ub == u {
		t.Fatal("two blobs, one URL")
	}
	fetch(t, ub, b)
	readAll(t, s, da)
	if own, _ := s.signed.get(key, time.Now()); own == "" || own == u {
		t.Fatalf("the store's own URL %q, the redirect's %q: want two", own, u)
	}

	// At the window's end a new URL is signed: it is kept from now on
	// (it may read as the old one, signed in the same second).
	now = now.Add(time.Nanosecond)
	u = presign(da)
	if got := s.redirects.urls[key].until; !got.Equal(now.Add(time.Minute)) {
		t.Fatalf("at the window's end the URL kept until %v, want a new one until %v", got, now.Add(time.Minute))
	}
	fetch(t, u, a)

	// A failed signature keeps nothing.
	c, dc := blob(22)
	if err := s.Put(ctx, dc, c); err != nil {
		t.Fatal(err)
	}
	keyC, _ := s.key(dc)
	s.redirects.expiry = 8 * 24 * time.Hour // beyond S3's 7 days
	if u, err := s.Presign(ctx, dc); err == nil {
		t.Fatalf("an expiry of 8 days signed %s", u)
	}
	if _, ok := s.redirects.urls[keyC]; ok {
		t.Fatal("a failed signature was kept")
	}
	s.redirects.expiry = 5 * time.Minute
	// A cancelled request may fail or get a URL; either way, the next
	// one gets a URL that works.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if u, err := s.Presign(cancelled, dc); err == nil {
		fetch(t, u, c)
	} else if _, ok := s.redirects.urls[keyC]; ok {
		t.Fatalf("a signature that failed (%v) was kept", err)
	}
	fetch(t, presign(dc), c)

	for i := range maxSigned + 10 {
		presign(archive.Digest([]byte(fmt.Sprint(i))))
		if len(s.redirects.urls) > maxSigned {
			t.Fatalf("%d URLs kept, bound %d", len(s.redirects.urls), maxSigned)
		}
	}
}

// fetch GETs the presigned URL u as a client without credentials would,
// and checks it serves want.
func fetch(t *testing.T, u string, want []byte) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || !bytes.Equal(got, want) {
		t.Fatalf("GET %s: %d, %d bytes of %d, %v", u, resp.StatusCode, len(got), len(want), err)
	}
}

// BenchmarkPresign: a redirect's URL reused from the window, and one
// signed anew (a window of zero), as before reuse.
func BenchmarkPresign(b *testing.B) {
	s, _, _ := openWith(b, "", Options{CacheBytes: -1})
	_, digest := blob(1)
	for _, bc := range []struct {
		name   string
		window time.Duration
	}{{"reused", s.redirects.reuse}, {"fresh", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			s.redirects.reuse, s.redirects.urls = bc.window, nil
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Presign(context.Background(), digest); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
