package s3

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// A download's GET is sent with a presigned URL, signed once per object
// and reused, straight to the transport (or on the store's own
// connections: direct.go): minio-go builds, signs and
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
	// maxSigned bounds the URLs kept, for each use; when full, they are
	// all dropped.
	maxSigned = 4096
)

// Presign hands out the URL it signed last for the same blob, as long as
// that was less than a quarter of the expiry and at most maxRedirectReuse
// ago: signing is most of the server's CPU per redirected download
// (36-47 µs), and a burst of downloads of one release then costs a map
// look-up each. A client so receives at least three quarters of the
// expiry. The window is short because a reused URL cannot be dropped
// when it fails, as the store's own are: the store never sees the
// client's GET, and a URL signed with credentials that were since
// rotated, or with a session token that has since expired, is refused
// (403) to every client it is handed to for as long as it is reused.
const maxRedirectReuse = time.Minute

// signedURL is a presigned GET URL and when it stops being reused.
type signedURL struct {
	url   string
	until time.Time
}

// signedURLs holds presigned GET URLs by object key, each signed for
// expiry with query and reused for reuse: the store has one for its own
// GETs and one for the redirects it answers (Presign), whose URLs differ
// in query and reuse.
type signedURLs struct {
	expiry, reuse time.Duration
	query         url.Values
	now           func() time.Time // time.Now; tests move it on

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

// presigned returns a URL of key from c: the one kept, or a new one,
// kept when signing succeeded (an error is never kept: the next call
// signs again).
func (s *Store) presigned(ctx context.Context, c *signedURLs, key string) (string, error) {
	now := c.now()
	if u, ok := c.get(key, now); ok {
		return u, nil
	}
	pu, err := s.c.PresignedGetObject(ctx, s.bucket, key, c.expiry, c.query)
	if err != nil {
		return "", err
	}
	u := pu.String()
	c.put(key, u, now.Add(c.reuse))
	return u, nil
}

// signedGet GETs key from offset to its end with a presigned URL. It
// returns the body and the object's size, or ok false when the answer is
// anything but the bytes asked for; the caller then asks minio-go.
func (s *Store) signedGet(ctx context.Context, key string, offset int64) (body io.ReadCloser, size int64, ok bool) {
	u, err := s.presigned(ctx, &s.signed, key)
	if err != nil {
		return nil, 0, false
	}
	want := http.StatusOK
	if offset > 0 {
		want = http.StatusPartialContent
	}
	status, body, size, err := s.send(ctx, u, offset)
	if err != nil {
		return nil, 0, false
	}
	if status != want {
		body.Close()
		s.signed.drop(key)
		return nil, 0, false
	}
	return body, offset + size, true
}

// send GETs the presigned URL u from offset, on a connection of the
// store's own when it has a directGetter for u's host (see direct.go),
// and through the transport otherwise. It returns the status, the body
// and its size; a body of unknown size is an error.
func (s *Store) send(ctx context.Context, u string, offset int64) (int, io.ReadCloser, int64, error) {
	if s.direct != nil {
		pu, err := url.Parse(u)
		if err != nil {
			return 0, nil, 0, err
		}
		if pu.Scheme == "http" && pu.Host == s.direct.host {
			status, b, err := s.direct.get(ctx, pu, offset)
			if err != nil {
				return 0, nil, 0, err
			}
			return status, b, b.left, nil
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, 0, err
	}
	if offset > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(offset, 10)+"-")
	}
	resp, err := s.tr.RoundTrip(req)
	if err != nil {
		return 0, nil, 0, err
	}
	if resp.ContentLength < 0 {
		resp.Body.Close()
		return 0, nil, 0, errors.New("s3: a response without Content-Length")
	}
	return resp.StatusCode, resp.Body, resp.ContentLength, nil
}
