package s3

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/internal/testservice"
	"github.com/plugkit/plugkit/registry/blobs"
)

// open starts versitygw and opens a store on a new bucket under prefix,
// with the credentials in the environment as an operator would set them,
// and without the memory cache, so that every read reaches the server.
func open(t *testing.T, prefix string) (*Store, *testservice.S3, string) {
	return openWith(t, prefix, Options{CacheBytes: -1})
}

func openWith(t testing.TB, prefix string, opts Options) (*Store, *testservice.S3, string) {
	t.Helper()
	srv := testservice.StartS3(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	bucket := srv.NewBucket(t)
	s, err := Open(context.Background(), "s3://"+bucket+prefix, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s, srv, bucket
}

func blob(n int) ([]byte, string) {
	b := bytes.Repeat([]byte(fmt.Sprintf("blob %d ", n)), 1000+n)
	return b, archive.Digest(b)
}

func TestParseURL(t *testing.T) {
	for raw, want := range map[string]string{
		"s3://bucket":            "bucket|",
		"s3://bucket/":           "bucket|",
		"s3://bucket/a/b/":       "bucket|a/b",
		"s3://bucket/plugkit":    "bucket|plugkit",
		"s3://bucket/a//b":       "error",
		"s3://bucket/%2e%2e/x":   "error",
		"s3://bucket/a/./b":      "error",
		"s3://":                  "error",
		"https://bucket/x":       "error",
		"s3://key:secret@bucket": "error",
		"s3://bucket/x?region=a": "error",
		"bucket/prefix":          "error",
	} {
		b, p, err := ParseURL(raw)
		got := b + "|" + p
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("ParseURL(%q) = %q (%v), want %q", raw, got, err, want)
		}
	}
}

// TestRoundTrip: objects are named PREFIX/sha256/HEX; Open streams with
// Range support; a mismatching digest stores nothing; an unknown digest is
// blobs.ErrNotFound; malformed digests never become names.
func TestRoundTrip(t *testing.T) {
	s, srv, bucket := open(t, "/reg/prod")
	ctx := context.Background()
	data, digest := blob(1)
	if err := s.Put(ctx, digest, data); err != nil {
		t.Fatal(err)
	}
	onDisk := filepath.Join(srv.Dir, bucket, "reg", "prod", "sha256", strings.TrimPrefix(digest, "sha256:"))
	if b, err := os.ReadFile(onDisk); err != nil || !bytes.Equal(b, data) {
		t.Fatalf("object %s: %v", onDisk, err)
	}
	if err := s.Put(ctx, digest, data); err != nil {
		t.Fatalf("idempotent put: %v", err)
	}
	other, _ := blob(2)
	if err := s.Put(ctx, archive.Digest([]byte("x")), other); !errors.Is(err, blobs.ErrDigestMismatch) {
		t.Fatalf("mismatch: %v", err)
	}
	if err := s.Put(ctx, "sha256:../../etc", other); err == nil {
		t.Fatal("a malformed digest was accepted")
	}
	f, size, err := s.Open(ctx, digest)
	if err != nil || size != int64(len(data)) {
		t.Fatalf("open: %d %v", size, err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "", time.Time{}, f)
	}))
	defer ts.Close()
	req, _ := http.NewRequest("GET", ts.URL, nil)
	req.Header.Set("Range", "bytes=100-199")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	part, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 206 || !bytes.Equal(part, data[100:200]) {
		t.Fatalf("range: %d %q", resp.StatusCode, part)
	}
	f.Close()
	if _, _, err := s.Open(ctx, archive.Digest([]byte("absent"))); !errors.Is(err, blobs.ErrNotFound) {
		t.Fatalf("absent: %v", err)
	}
}

// TestPresign: the presigned URL serves the bytes without credentials,
// and a tampered one is refused.
func TestPresign(t *testing.T) {
	s, _, _ := open(t, "")
	ctx := context.Background()
	data, digest := blob(3)
	if err := s.Put(ctx, digest, data); err != nil {
		t.Fatal(err)
	}
	u, err := s.Presign(ctx, digest)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || sha256.Sum256(got) != sha256.Sum256(data) || resp.Header.Get("Content-Type") != "application/gzip" {
		t.Fatalf("presigned GET: %d %s, %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), len(got))
	}
	resp, err = http.Get(strings.Replace(u, strings.TrimPrefix(digest, "sha256:")[:8], "00000000", 1))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("a tampered presigned URL: %d", resp.StatusCode)
	}
}

// TestSweeper: Walk lists the blobs and nothing else under the prefix;
// RemoveIfOlder removes only what is older than the cutoff.
func TestSweeper(t *testing.T) {
	s, srv, bucket := open(t, "/p")
	ctx := context.Background()
	want := map[string]int64{}
	for i := range 3 {
		data, digest := blob(10 + i)
		if err := s.Put(ctx, digest, data); err != nil {
			t.Fatal(err)
		}
		want[digest] = int64(len(data))
	}
	// Not blobs: a stray name under sha256/ and an object outside it.
	for _, p := range []string{"p/sha256/not-a-digest", "p/other/x", "elsewhere"} {
		full := filepath.Join(srv.Dir, bucket, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte("x"), 0o644)
	}
	got := map[string]int64{}
	if err := s.Walk(ctx, func(i blobs.Info) error {
		if time.Since(i.ModTime) > time.Minute {
			t.Errorf("%s: mod time %v", i.Digest, i.ModTime)
		}
		got[i.Digest] = i.Size
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("walk: %v, want %v", got, want)
	}
	stop := errors.New("stop")
	if err := s.Walk(ctx, func(blobs.Info) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("walk error: %v", err)
	}
	_, digest := blob(10)
	if removed, err := s.RemoveIfOlder(ctx, digest, time.Now().Add(-time.Hour)); err != nil || removed {
		t.Fatalf("young blob: %v %v", removed, err)
	}
	if removed, err := s.RemoveIfOlder(ctx, digest, time.Now().Add(time.Hour)); err != nil || !removed {
		t.Fatalf("old blob: %v %v", removed, err)
	}
	if _, _, err := s.Open(ctx, digest); !errors.Is(err, blobs.ErrNotFound) {
		t.Fatalf("removed blob: %v", err)
	}
	if removed, err := s.RemoveIfOlder(ctx, digest, time.Now().Add(time.Hour)); err != nil || removed {
		t.Fatalf("absent blob: %v %v", removed, err)
	}
}

// TestOpenErrors: a missing bucket, wrong credentials and a bad endpoint
// fail Open with a clear error that holds no secret.
func TestOpenErrors(t *testing.T) {
	srv := testservice.StartS3(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	bucket := srv.NewBucket(t)
	ctx := context.Background()
	if _, err := Open(ctx, "s3://nope-"+bucket, Options{}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("missing bucket: %v", err)
	}
	if _, err := Open(ctx, "s3://"+bucket, Options{Endpoint: "ftp://x"}); err == nil {
		t.Fatal("ftp endpoint accepted")
	}
	if _, err := Open(ctx, "s3://"+bucket, Options{Addressing: "dns"}); err == nil {
		t.Fatal("unknown addressing accepted")
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret-value")
	_, err := Open(ctx, "s3://"+bucket, Options{})
	if err == nil || strings.Contains(err.Error(), "wrong-secret-value") {
		t.Fatalf("wrong secret: %v", err)
	}
	// The shared credentials file, when the environment has none.
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	creds := filepath.Join(t.TempDir(), "credentials")
	os.WriteFile(creds, []byte("[plugkit]\naws_access_key_id = "+srv.AccessKey+"\naws_secret_access_key = "+srv.SecretKey+"\n"), 0o600)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", creds)
	t.Setenv("AWS_PROFILE", "plugkit")
	if _, err := Open(ctx, "s3://"+bucket, Options{}); err != nil {
		t.Fatalf("credentials from the shared file: %v", err)
	}
}

// FuzzParseURL: whatever the input, ParseURL either refuses it or returns
// a bucket and a prefix that make the same URL again.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"s3://bucket", "s3://bucket/a/b", "s3://b//x", "s3://k:s@b/p", "s3://b/p?x=1", "s3:///p", "s3://b/%2e%2e/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		bucket, prefix, err := ParseURL(raw)
		if err != nil {
			return
		}
		if bucket == "" || strings.HasPrefix(prefix, "/") || strings.HasSuffix(prefix, "/") || strings.Contains(prefix, "//") ||
			slices.Contains(strings.Split(prefix, "/"), "..") {
			t.Fatalf("ParseURL(%q) = %q, %q", raw, bucket, prefix)
		}
		again := "s3://" + bucket
		if prefix != "" {
			again += "/" + prefix
		}
		if b2, p2, err := ParseURL(again); err != nil || b2 != bucket || p2 != prefix {
			t.Fatalf("ParseURL(%q) = %q %q, and of %q: %q %q %v", raw, bucket, prefix, again, b2, p2, err)
		}
	})
}

// TestCache: blobs up to an eighth of the budget are served from memory
// once read or written, least recently used out first; a damaged object is
// never cached; a removed blob leaves the cache.
func TestCache(t *testing.T) {
	s, srv, bucket := openWith(t, "", Options{CacheBytes: 8 * 20000})
	ctx := context.Background()
	objPath := func(digest string) string {
		return filepath.Join(srv.Dir, bucket, "sha256", strings.TrimPrefix(digest, "sha256:"))
	}
	read := func(digest string) ([]byte, error) {
		f, _, err := s.Open(ctx, digest)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return io.ReadAll(f)
	}
	small, dSmall := blob(1) // about 8 KB: cached
	if err := s.Put(ctx, dSmall, small); err != nil {
		t.Fatal(err)
	}
	os.Remove(objPath(dSmall)) // behind the store's back
	if got, err := read(dSmall); err != nil || !bytes.Equal(got, small) {
		t.Fatalf("a written blob is not served from the cache: %v", err)
	}
	large := bytes.Repeat([]byte("L"), 30000) // over an eighth of the budget: streamed
	dLarge := archive.Digest(large)
	if err := s.Put(ctx, dLarge, large); err != nil {
		t.Fatal(err)
	}
	os.Remove(objPath(dLarge))
	if _, err := read(dLarge); !errors.Is(err, blobs.ErrNotFound) {
		t.Fatalf("a blob over the size bound was cached: %v", err)
	}
	// A damaged object is served as it is, and not kept.
	other, dOther := blob(2)
	if err := s.Put(ctx, dOther, other); err != nil {
		t.Fatal(err)
	}
	s.cache.remove("sha256/" + strings.TrimPrefix(dOther, "sha256:"))
	damaged := bytes.Clone(other)
	damaged[0] ^= 1
	os.WriteFile(objPath(dOther), damaged, 0o644)
	if got, err := read(dOther); err != nil || !bytes.Equal(got, damaged) {
		t.Fatalf("damaged object: %v", err)
	}
	os.WriteFile(objPath(dOther), other, 0o644)
	if got, _ := read(dOther); !bytes.Equal(got, other) {
		t.Fatal("a damaged object was cached")
	}
	// Filling the budget pushes the least recently used out.
	for i := range 30 {
		b, d := blob(100 + i)
		if err := s.Put(ctx, d, b); err != nil {
			t.Fatal(err)
		}
	}
	if s.cache.used > s.cache.budget {
		t.Fatalf("cache holds %d bytes, budget %d", s.cache.used, s.cache.budget)
	}
	if _, _, ok := s.cache.get("sha256/" + strings.TrimPrefix(dSmall, "sha256:")); ok {
		t.Fatal("the least recently used blob is still cached")
	}
	_, d := blob(129)
	if removed, err := s.RemoveIfOlder(ctx, d, time.Now().Add(time.Hour)); err != nil || !removed {
		t.Fatal(removed, err)
	}
	if _, err := read(d); !errors.Is(err, blobs.ErrNotFound) {
		t.Fatalf("a removed blob is still served: %v", err)
	}
}
