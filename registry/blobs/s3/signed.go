package s3

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// A download's GET is sent with a presigned URL, signed once per object
// and reused, straight to the transport: minio-go builds, signs and
// checks each of its requests anew, which was a fifth of the server's CPU
// per 500 KB download streamed from versitygw (bench/replicas.sh,
// section 2). A GET that does not answer as asked (an error, a 404, a 403
// after the credentials changed) is sent again through minio-go, which
// retries, signs with fresh credentials and tells the errors apart as
// before.
const (
	// signedReuse is how long one URL serves the store's own GETs.
	signedReuse = 5 * time.Minute
	// signedExpiry is the validity it is signed with: a URL taken at the
	// end of its reuse still has this minus signedReuse to be sent.
	signedExpiry = 15 * time.Minute
	// maxSigned bounds the URLs kept; when full, they are all dropped.
	maxSigned = 4096
)

// signedURL is a presigned GET URL and when it stops being reused.
type signedURL struct {
	url   string
	until time.Time
}

// signedURLs holds the store's presigned GET URLs by object key.
type signedURLs struct {
	mu   sync.Mutex
	urls map[string]signedURL
}

// get returns the URL kept for key, if it is still to be reused.
func (c *signedURLs) get(key string, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	u, ok := c.urls[key]
	return u.url, ok && now.Before(u.until)
}

func (c *signedURLs) put(key, url string, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.urls == nil || len(c.urls) >= maxSigned {
		c.urls = make(map[string]signedURL)
	}
	c.urls[key] = signedURL{url, until}
}

func (c *signedURLs) drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.urls, key)
}

// signedGet GETs key from offset to its end with a presigned URL. It
// returns the body and the object's size, or ok false when the answer is
// anything but the bytes asked for; the caller then asks minio-go.
func (s *Store) signedGet(ctx context.Context, key string, offset int64) (body io.ReadCloser, size int64, ok bool) {
	now := time.Now()
	u, ok := s.signed.get(key, now)
	if !ok {
		pu, err := s.c.PresignedGetObject(ctx, s.bucket, key, signedExpiry, nil)
		if err != nil {
			return nil, 0, false
		}
		u = pu.String()
		s.signed.put(key, u, now.Add(signedReuse))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, false
	}
	want := http.StatusOK
	if offset > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(offset, 10)+"-")
		want = http.StatusPartialContent
	}
	resp, err := s.tr.RoundTrip(req)
	if err != nil {
		return nil, 0, false
	}
	if resp.StatusCode != want || resp.ContentLength < 0 {
		resp.Body.Close()
		s.signed.drop(key)
		return nil, 0, false
	}
	return resp.Body, offset + resp.ContentLength, true
}
