package registry

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/internal/testservice"
	"github.com/plugkit/plugkit/registry/blobs"
	"github.com/plugkit/plugkit/registry/blobs/s3"

	"github.com/plugkit/plugkit/registry/storage"
)

// streamStore is the blob directory with its files hidden behind a plain
// reader, as an object store's responses are, and the largest read each
// download asked for.
type streamStore struct {
	blobs.Store
	largestRead atomic.Int64
}

func (s *streamStore) Open(ctx context.Context, digest string) (io.ReadSeekCloser, int64, error) {
	f, size, err := s.Store.Open(ctx, digest)
	if err != nil {
		return nil, 0, err
	}
	return &streamReader{ReadSeekCloser: f, largest: &s.largestRead}, size, nil
}

type streamReader struct {
	io.ReadSeekCloser
	largest *atomic.Int64
}

func (r *streamReader) Read(p []byte) (int, error) {
	for {
		m := r.largest.Load()
		if int64(len(p)) <= m || r.largest.CompareAndSwap(m, int64(len(p))) {
			break
		}
	}
	return r.ReadSeekCloser.Read(p)
}

// newStreamServer is a test registry on a streamStore, with an artifact of
// 3 MiB of random bytes (three stream buffers) published.
func newStreamServer(t *testing.T) (store *streamStore, url string, artifact []byte) {
	t.Helper()
	db, dir, err := storage.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	store = &streamStore{Store: dir}
	s, err := New(Config{Store: db, Blobs: store, PublishTokens: []string{publishToken}, AnonymousRead: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := newServerFor(t, s)
	payload := make([]byte, 3<<20)
	rand.NewChaCha8([32]byte{13}).Read(payload)
	artifact = pluginArchive(t, "stream", "1.0.0", map[string]string{"payload.bin": string(payload)})
	if _, err := client(ts.URL, publishToken).Publish(context.Background(), artifact, ""); err != nil {
		t.Fatal(err)
	}
	return store, ts.URL + "/plugin-protocol/v1/artifacts/" + archive.Digest(artifact), artifact
}

// getRange downloads url, the byte range rng of it unless rng is "".
func getRange(url, rng string) (int, []byte, error) {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return 0, nil, err
	}
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// TestArtifactStreamBuffer: a blob that is not a file is copied through
// streamBufSize, not net/http's 32 KiB, and arrives whole; a Range across
// the buffers' boundaries gets exactly its bytes.
func TestArtifactStreamBuffer(t *testing.T) {
	store, url, a := newStreamServer(t)
	if len(a) <= 2*streamBufSize {
		t.Fatalf("the artifact (%d bytes) must span several buffers", len(a))
	}
	status, b, err := getRange(url, "")
	if err != nil || status != http.StatusOK || !bytes.Equal(b, a) {
		t.Fatalf("GET: %d, %d bytes of %d, %v", status, len(b), len(a), err)
	}
	if got := store.largestRead.Load(); got != streamBufSize {
		t.Errorf("largest read %d bytes, want %d", got, streamBufSize)
	}
	lo, hi := streamBufSize-5, 2*streamBufSize+7
	status, b, err = getRange(url, fmt.Sprintf("bytes=%d-%d", lo, hi))
	if err != nil || status != http.StatusPartialContent || !bytes.Equal(b, a[lo:hi+1]) {
		t.Fatalf("Range: %d, %d bytes, %v", status, len(b), err)
	}
}

// TestArtifactStreamBuffersBounded: while every stream buffer is taken,
// downloads still arrive whole, through net/http's own copy.
func TestArtifactStreamBuffersBounded(t *testing.T) {
	store, url, a := newStreamServer(t)
	for range maxStreamBufs {
		streamSlots <- struct{}{}
	}
	t.Cleanup(func() {
		for range maxStreamBufs {
			<-streamSlots
		}
	})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if status, b, err := getRange(url, ""); err != nil || status != http.StatusOK || !bytes.Equal(b, a) {
				t.Errorf("GET: %d, %d bytes of %d, %v", status, len(b), len(a), err)
			}
		})
	}
	wg.Wait()
	if got := store.largestRead.Load(); got >= streamBufSize {
		t.Errorf("largest read %d bytes while every stream buffer was taken", got)
	}
}

// TestStreamWriterUnwraps: a ResponseController given the stream writer
// reaches the connection's writer (here a recorder, which can flush).
func TestStreamWriterUnwraps(t *testing.T) {
	rec := httptest.NewRecorder()
	if err := http.NewResponseController(streamWriter{ResponseWriter: rec}).Flush(); err != nil {
		t.Fatalf("Flush through streamWriter: %v", err)
	}
	if !rec.Flushed {
		t.Error("the recorder underneath was not flushed")
	}
}

// TestArtifactFromS3: from S3 without the memory cache, an artifact
// arrives whole, and a Range exactly, both over plain HTTP (the bytes
// spliced from the store's connection into the client's) and over TLS
// (copied through a buffer).
func TestArtifactFromS3(t *testing.T) {
	srv := testservice.StartS3(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	store, err := s3.Open(context.Background(), "s3://"+srv.NewBucket(t), s3.Options{CacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	db, _, err := storage.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := New(Config{Store: db, Blobs: store, PublishTokens: []string{publishToken}, AnonymousRead: true})
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 3<<20)
	rand.NewChaCha8([32]byte{14}).Read(payload)
	a := pluginArchive(t, "spliced", "1.0.0", map[string]string{"payload.bin": string(payload)})
	plain := newServerFor(t, s)
	if _, err := client(plain.URL, publishToken).Publish(context.Background(), a, ""); err != nil {
		t.Fatal(err)
	}
	secure := httptest.NewTLSServer(s)
	t.Cleanup(secure.Close)
	for name, ts := range map[string]*httptest.Server{"plain": plain, "tls": secure} {
		url := ts.URL + "/plugin-protocol/v1/artifacts/" + archive.Digest(a)
		for _, rng := range []string{"", "bytes=1000-", "bytes=5-1048580"} {
			req, _ := http.NewRequest("GET", url, nil)
			if rng != "" {
				req.Header.Set("Range", rng)
			}
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := a
			switch rng {
			case "bytes=1000-":
				want = a[1000:]
			case "bytes=5-1048580":
				want = a[5:1048581]
			}
			if err != nil || !bytes.Equal(b, want) {
				t.Errorf("%s, Range %q: %d, %d bytes of %d, %v", name, rng, resp.StatusCode, len(b), len(want), err)
			}
		}
	}
}
