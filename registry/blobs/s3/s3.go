// Package s3 is a blobs.Store in S3-compatible object storage (AWS S3,
// MinIO, versitygw, Ceph…), through github.com/minio/minio-go/v7, so that
// any number of registry replicas share one set of artifacts.
//
// The blob "sha256:HEX" is the object PREFIX/sha256/HEX of one bucket.
// Put checks the bytes against the digest before sending them, and sends
// their MD5 (and, over http, their signed SHA-256) with them, which the
// server checks before it stores anything; an object is written whole or
// not at all, so a crash leaves at most a complete object that no release
// refers to, which the collector removes.
//
// Credentials come from the environment (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) or the AWS shared credentials
// file (AWS_SHARED_CREDENTIALS_FILE, AWS_PROFILE), never from arguments.
package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/registry/blobs"
)

// Addressing says how the bucket is named in requests.
type Addressing string

// The addressing styles.
const (
	// Auto: virtual-hosted for AWS endpoints, path-style for others.
	Auto Addressing = ""
	// Path: http://ENDPOINT/BUCKET/KEY, what S3-compatible servers need.
	Path Addressing = "path"
	// Virtual: http://BUCKET.ENDPOINT/KEY.
	Virtual Addressing = "virtual"
)

// Options configure Open. Every field has a default.
type Options struct {
	// Endpoint is the server's URL ("https://s3.example.com",
	// "http://127.0.0.1:7070"). Default: $AWS_ENDPOINT_URL_S3, then
	// $AWS_ENDPOINT_URL, then AWS S3 itself.
	Endpoint string
	// Region defaults to $AWS_REGION, then $AWS_DEFAULT_REGION, then
	// "us-east-1".
	Region string
	// Addressing defaults to Auto.
	Addressing Addressing
	// Transport sends the requests (default: a clone of
	// http.DefaultTransport). With the default, downloads from a plain
	// http endpoint reached without a proxy go on connections of the
	// store's own, from which the registry splices their bytes into
	// its responses (see direct.go).
	Transport http.RoundTripper
	// PresignExpiry is how long a presigned download URL stays valid
	// (default 5 minutes). Presign hands one URL out again for a
	// quarter of it, at most a minute.
	PresignExpiry time.Duration
	// CacheBytes is the memory kept for recently downloaded or uploaded
	// blobs, each at most an eighth of it (default DefaultCacheBytes;
	// negative disables the cache).
	CacheBytes int64
}

// DefaultCacheBytes is the default of Options.CacheBytes.
const DefaultCacheBytes = 64 << 20

// maxFills bounds the downloads read whole into memory to be cached at
// once; others stream. With the size bound per blob, a burst of misses
// holds at most half the cache's budget on top of it.
const maxFills = 4

// Store is a blobs.Store in one bucket under one prefix.
type Store struct {
	c         *minio.Client
	tr        http.RoundTripper // c's transport, for signedGet
	ownTr     *http.Transport   // tr when Open made it, or nil
	direct    *directGetter     // nil, or signedGet's connections (direct.go)
	signed    signedURLs        // for signedGet
	redirects signedURLs        // for Presign
	bucket    string
	prefix    string // "" or "some/prefix/"
	cache     *blobCache
	fills     chan struct{} // semaphore of cache fills
}

var (
	_ blobs.Store     = (*Store)(nil)
	_ blobs.Sweeper   = (*Store)(nil)
	_ blobs.Presigner = (*Store)(nil)
	_ io.Closer       = (*Store)(nil)
)

// ParseURL splits "s3://BUCKET/PREFIX" into the bucket and the prefix
// (which may be empty).
func ParseURL(raw string) (bucket, prefix string, err error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "s3" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("s3: %q: want s3://BUCKET or s3://BUCKET/PREFIX", raw)
	}
	prefix = strings.Trim(u.Path, "/")
	if prefix != "" {
		for seg := range strings.SplitSeq(prefix, "/") {
			// Servers that map keys onto files (versitygw's posix backend)
			// must never see a key climb out of the bucket.
			if seg == "" || seg == "." || seg == ".." || strings.ContainsFunc(seg, unicode.IsControl) {
				return "", "", fmt.Errorf("s3: %q: the prefix must be names separated by single slashes", raw)
			}
		}
	}
	return u.Host, prefix, nil
}

// Open returns the store of "s3://BUCKET/PREFIX", after checking that the
// bucket exists and the credentials can read it.
func Open(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	bucket, prefix, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	endpoint := firstOf(opts.Endpoint, os.Getenv("AWS_ENDPOINT_URL_S3"), os.Getenv("AWS_ENDPOINT_URL"), "https://s3.amazonaws.com")
	eu, err := url.Parse(endpoint)
	if err != nil || (eu.Scheme != "http" && eu.Scheme != "https") || eu.Host == "" || strings.Trim(eu.Path, "/") != "" {
		return nil, fmt.Errorf("s3: endpoint %q: want http(s)://HOST[:PORT]", endpoint)
	}
	lookup := minio.BucketLookupAuto
	switch opts.Addressing {
	case Path:
		lookup = minio.BucketLookupPath
	case Virtual:
		lookup = minio.BucketLookupDNS
	case Auto:
	default:
		return nil, fmt.Errorf("s3: addressing %q: want path or virtual", opts.Addressing)
	}
	tr := opts.Transport
	var ownTr *http.Transport
	var direct *directGetter
	if tr == nil {
		ownTr = http.DefaultTransport.(*http.Transport).Clone()
		ownTr.MaxIdleConnsPerHost = 64 // every replica request may fetch a blob
		tr = ownTr
		direct = newDirectGetter(eu)
	}
	c, err := minio.New(eu.Host, &minio.Options{
		Creds: credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{}, &credentials.FileAWSCredentials{},
		}),
		Secure:       eu.Scheme == "https",
		Region:       firstOf(opts.Region, os.Getenv("AWS_REGION"), os.Getenv("AWS_DEFAULT_REGION"), "us-east-1"),
		BucketLookup: lookup,
		Transport:    tr,
	})
	if err != nil {
		return nil, fmt.Errorf("s3: %w", err)
	}
	cacheBytes := opts.CacheBytes
	if cacheBytes == 0 {
		cacheBytes = DefaultCacheBytes
	}
	expiry := opts.PresignExpiry
	if expiry <= 0 {
		expiry = 5 * time.Minute
	}
	s := &Store{c: c, tr: tr, ownTr: ownTr, direct: direct, bucket: bucket, prefix: prefix,
		signed: signedURLs{expiry: signedExpiry, reuse: signedReuse, now: time.Now},
		redirects: signedURLs{expiry: expiry, reuse: min(expiry/4, maxRedirectReuse), now: time.Now,
			query: url.Values{"response-content-type": {"application/gzip"}}},
		cache: newBlobCache(cacheBytes), fills: make(chan struct{}, maxFills)}
	if s.prefix != "" {
		s.prefix += "/"
	}
	ok, err := c.BucketExists(ctx, bucket)
	if err != nil {
		return nil, fmt.Errorf("s3: bucket %s at %s: %w", bucket, eu.Host, err)
	}
	if !ok {
		return nil, fmt.Errorf("s3: bucket %s does not exist at %s", bucket, eu.Host)
	}
	return s, nil
}

// Close closes the connections the store keeps idle: its direct GETs'
// (direct.go) and, when Open made the transport (Options.Transport nil),
// the transport's. It is meant for the end of the store's use, after the
// server has drained. A download still under way when it is called reads
// to its end; its direct connection is then closed, not kept. The store
// still serves later calls: a direct GET on a new connection closed after
// it, other requests on the transport, which may keep connections idle
// again. Close may be called more than once, and returns nil.
func (s *Store) Close() error {
	if s.direct != nil {
		s.direct.close()
	}
	if s.ownTr != nil {
		s.ownTr.CloseIdleConnections()
	}
	return nil
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// key is the object name of digest; like blobs.Dir, only the strict
// digest form may become a name.
func (s *Store) key(digest string) (string, error) {
	d, err := archive.ParseDigest(digest)
	if err != nil {
		return "", err
	}
	return s.prefix + "sha256/" + strings.TrimPrefix(d, "sha256:"), nil
}

// Put implements blobs.Store. Putting a blob that exists writes it again,
// which refreshes its modification time as blobs.Store asks.
func (s *Store) Put(ctx context.Context, digest string, data []byte) error {
	key, err := s.key(digest)
	if err != nil {
		return err
	}
	if archive.Digest(data) != digest {
		return blobs.ErrDigestMismatch
	}
	_, err = s.c.PutObject(ctx, s.bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{
		ContentType: "application/gzip",
		// The server checks the body against it before storing
		// anything, also over https, where the payload is not signed.
		SendContentMd5: true,
	})
	if err != nil {
		return fmt.Errorf("s3: put %s: %w", key, err)
	}
	s.cache.put(key, data)
	return nil
}

// Open implements blobs.Store with one GET: its headers give the size (or
// the 404), and its body is what a download reads from start to end. A
// Range request seeks, and the reader then asks for the range it needs.
func (s *Store) Open(ctx context.Context, digest string) (io.ReadSeekCloser, int64, error) {
	key, err := s.key(digest)
	if err != nil {
		return nil, 0, err
	}
	if f, size, ok := s.cache.get(key); ok {
		return f, size, nil
	}
	r := &objectReader{ctx: ctx, s: s, key: key}
	size, err := r.open(0)
	if err != nil {
		return nil, 0, err
	}
	r.size = size
	if !s.cache.fits(r.size) {
		return r, r.size, nil
	}
	select {
	case s.fills <- struct{}{}:
		defer func() { <-s.fills }()
	default:
		return r, r.size, nil // enough fills under way: stream this one
	}
	data := make([]byte, r.size)
	_, err = io.ReadFull(r, data)
	r.Close()
	if err != nil {
		return nil, 0, fmt.Errorf("s3: get %s: %w", key, err)
	}
	// Only bytes that match their name are kept: a damaged object is
	// served (and refused by the client's digest check), never cached.
	if archive.Digest(data) == digest {
		s.cache.put(key, data)
	}
	return nopCloser{bytes.NewReader(data)}, r.size, nil
}

// objectReader reads an object as an io.ReadSeekCloser, streaming from
// one GET as long as reads follow each other, and opening a ranged GET
// when a seek moves elsewhere. http.ServeContent's seek to the end (for
// the size) and back costs nothing.
type objectReader struct {
	ctx  context.Context
	s    *Store
	key  string
	size int64
	off  int64         // where the next Read starts
	body io.ReadCloser // the open GET's body, at pos
	pos  int64
}

// open starts a GET from offset and returns the object's size.
func (r *objectReader) open(offset int64) (int64, error) {
	if r.body != nil {
		r.body.Close()
		r.body = nil
	}
	if body, size, ok := r.s.signedGet(r.ctx, r.key, offset); ok {
		r.body, r.pos = body, offset
		return size, nil
	}
	var opts minio.GetObjectOptions
	if offset > 0 {
		if err := opts.SetRange(offset, 0); err != nil {
			return 0, err
		}
	}
	body, info, _, err := minio.Core{Client: r.s.c}.GetObject(r.ctx, r.s.bucket, r.key, opts)
	if isNotFound(err) {
		return 0, blobs.ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("s3: get %s: %w", r.key, err)
	}
	r.body, r.pos = body, offset
	return offset + info.Size, nil // the size of what was asked for
}

func (r *objectReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	if r.body == nil || r.pos != r.off {
		if _, err := r.open(r.off); err != nil {
			return 0, err
		}
	}
	n, err := r.body.Read(p)
	r.pos += int64(n)
	r.off += int64(n)
	if err == io.EOF && r.off < r.size {
		err = io.ErrUnexpectedEOF // the object is shorter than it said
	}
	return n, err
}

// SendTo implements blobs.Sender: the next n bytes go from the GET's
// connection to w without being copied through the process, when the
// GET is a direct one (direct.go). Otherwise it sends nothing and
// returns errors.ErrUnsupported.
func (r *objectReader) SendTo(w io.Writer, n int64) (int64, error) {
	if n > r.size-r.off {
		return 0, errors.ErrUnsupported
	}
	if r.body == nil || r.pos != r.off {
		if _, err := r.open(r.off); err != nil {
			return 0, err
		}
	}
	b, ok := r.body.(*directBody)
	if !ok {
		return 0, errors.ErrUnsupported
	}
	m, err := b.sendTo(w, n)
	r.pos += m
	r.off += m
	return m, err
}

func (r *objectReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.size
	default:
		return 0, errors.New("s3: invalid whence")
	}
	if offset < 0 {
		return 0, errors.New("s3: negative position")
	}
	r.off = offset
	return offset, nil
}

func (r *objectReader) Close() error {
	if r.body == nil {
		return nil
	}
	err := r.body.Close()
	r.body = nil
	return err
}

// Presign implements blobs.Presigner: a GET URL of the blob, answered as
// application/gzip, valid for the store's PresignExpiry from when it was
// signed. A URL signed for the same blob shortly before is handed out
// again (maxRedirectReuse), with at least three quarters of the expiry
// left.
func (s *Store) Presign(ctx context.Context, digest string) (string, error) {
	key, err := s.key(digest)
	if err != nil {
		return "", err
	}
	u, err := s.presigned(ctx, &s.redirects, key)
	if err != nil {
		return "", fmt.Errorf("s3: presign %s: %w", key, err)
	}
	return u, nil
}

// Walk implements blobs.Sweeper: every object under PREFIX/sha256/ whose
// name is a digest.
func (s *Store) Walk(ctx context.Context, fn func(blobs.Info) error) error {
	base := s.prefix + "sha256/"
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing when fn fails
	for obj := range s.c.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: base, Recursive: true}) {
		if obj.Err != nil {
			return fmt.Errorf("s3: list %s: %w", base, obj.Err)
		}
		digest, err := archive.ParseDigest("sha256:" + strings.TrimPrefix(obj.Key, base))
		if err != nil {
			continue
		}
		if err := fn(blobs.Info{Digest: digest, Size: obj.Size, ModTime: obj.LastModified}); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// RemoveIfOlder implements blobs.Sweeper. S3 has no delete conditional on
// the modification time, so the check and the delete are two requests: a
// Put of the same bytes landing between them (one round trip) is lost.
// Only a blob unreferenced for the whole grace period is ever a candidate,
// so this needs a crashed publish's orphan to be republished with
// identical bytes in that instant.
func (s *Store) RemoveIfOlder(ctx context.Context, digest string, cutoff time.Time) (bool, error) {
	key, err := s.key(digest)
	if err != nil {
		return false, err
	}
	info, err := s.c.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if isNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("s3: stat %s: %w", key, err)
	}
	if !info.LastModified.Before(cutoff) {
		return false, nil
	}
	s.cache.remove(key)
	if err := s.c.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return false, fmt.Errorf("s3: remove %s: %w", key, err)
	}
	return true, nil
}

func isNotFound(err error) bool {
	return err != nil && minio.ToErrorResponse(err).Code == minio.NoSuchKey
}
