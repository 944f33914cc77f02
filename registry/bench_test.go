//go:build unix

package registry

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
	"github.com/plugkit/plugkit/registry/store/storetest"

	"github.com/plugkit/plugkit/registry/storage"
)

// benchServer is a registry with one published plugin of about 500 KB,
// served in process; ttl < 0 turns the resolve cache off.
func benchServer(b *testing.B, ttl int) (*Server, string, []byte) {
	b.Helper()
	data := b.TempDir()
	db, blobs, err := storage.OpenDir(data)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	cfg := Config{Store: db, Blobs: blobs, PublishTokens: []string{publishToken}, AnonymousRead: true}
	if ttl < 0 {
		cfg.ResolveCacheTTL = -1
	}
	s, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	body := pluginArchive(b, "bench", "1.0.0", map[string]string{"payload": randomText(500_000)})
	ts := httptest.NewServer(s)
	defer ts.Close()
	if _, err := client(ts.URL, publishToken).Publish(context.Background(), body, ""); err != nil {
		b.Fatal(err)
	}
	hex := strings.TrimPrefix(archive.Digest(body), "sha256:")
	return s, filepath.Join(data, "blobs", "sha256", hex[:2], hex), body
}

// discard is a ResponseWriter that keeps nothing, so that the benchmarks
// measure the handler, not a recorder.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// benchHandler serves url b.N times. Besides wall time it reports the
// process's CPU time per request (cpu-ns/op), which stays meaningful on a
// loaded machine where wall time does not.
func benchHandler(b *testing.B, h http.Handler, url string) {
	// A cancelable context, as net/http gives every request.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequest("GET", url, nil).WithContext(ctx)
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for range b.N {
		w := &discard{h: http.Header{}}
		h.ServeHTTP(w, req)
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the user and system CPU time of the process.
func cpuTime() time.Duration {
	var r syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// BenchmarkResolve is the handler's CPU cost of a resolve, with and without
// the cache (bench/registry.sh measures it over HTTP).
func BenchmarkResolve(b *testing.B) {
	for _, c := range []struct {
		name string
		ttl  int
	}{{"cache", 0}, {"nocache", -1}} {
		b.Run(c.name, func(b *testing.B) {
			s, _, _ := benchServer(b, c.ttl)
			benchHandler(b, s, distribution.Prefix+"/resolve?plugin_id=bench&channel=stable")
		})
	}
}

// BenchmarkArtifact compares the artifact handler with http.ServeFile on
// the same file; both copy into a discarding writer.
func BenchmarkArtifact(b *testing.B) {
	s, path, body := benchServer(b, 0)
	b.Run("registry", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		benchHandler(b, s, distribution.Prefix+"/artifacts/"+archive.Digest(body))
	})
	b.Run("servefile", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		benchHandler(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, path) }), "/blob")
	})
	if _, err := os.Stat(path); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCatalogPage is the handler's cost of the first catalog page
// (100 plugins) of a catalog of 5,000 (bench/replicas.sh measures the
// first page of 50,000 over HTTP on both stores, against its target).
func BenchmarkCatalogPage(b *testing.B) {
	db, blobs, err := storage.OpenDir(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	for i := range 5000 {
		r := storetest.NewRelease(store.Actor{Identity: "seed"}, fmt.Sprintf("seed-%06d", i), "1.0.0", storetest.Digest(i), "stable")
		if _, _, err := db.Publish(context.Background(), r); err != nil {
			b.Fatal(err)
		}
	}
	s, err := New(Config{Store: db, Blobs: blobs, AnonymousRead: true})
	if err != nil {
		b.Fatal(err)
	}
	benchHandler(b, s, distribution.Prefix+"/catalog")
}
