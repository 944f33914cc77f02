package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/blobs"
	"github.com/plugkit/plugkit/registry/store"

	"github.com/plugkit/plugkit/registry/storage"
)

// newPublishServer is a registry with alice and bob as publishers, on the
// given wrappers of its store and blobs (nil: as they are), and its data
// directory.
func newPublishServer(t *testing.T, cfg Config, wrapStore func(store.Store) store.Store, wrapBlobs func(blobs.Store) blobs.Store) (string, string) {
	t.Helper()
	data := t.TempDir()
	db, b, err := storage.OpenDir(data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cfg.Store, cfg.Blobs = db, b
	if wrapStore != nil {
		cfg.Store = wrapStore(db)
	}
	if wrapBlobs != nil {
		cfg.Blobs = wrapBlobs(b)
	}
	cfg.PublishTokens = []string{"alice=a-secret", "bob=b-secret"}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return newServerFor(t, s).URL, data
}

// blobFiles counts the files under the blob directory: blobs and
// temporary files alike.
func blobFiles(t *testing.T, data string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(filepath.Join(data, "blobs"), func(_ string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			n++
		}
		return err
	})
	return n
}

// TestRefusedPublishLeavesNoBlob: the store's refusals are looked for
// while the blob is written, and a refused publish leaves no file, blob
// or temporary, whichever refusal it is, the per-plugin quotas included.
func TestRefusedPublishLeavesNoBlob(t *testing.T) {
	ctx := context.Background()
	url, data := newPublishServer(t, Config{MaxReleasesPerPlugin: 2, MaxChannelsPerPlugin: 1}, nil, nil)
	alice, bob := client(url, "a-secret"), client(url, "b-secret")
	for _, p := range [][2]string{{"alpha", "1.0.0"}, {"alpha", "0.9.0"}, {"beta", "1.0.0"}} {
		if _, err := alice.Publish(ctx, pluginArchive(t, p[0], p[1], nil), ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := alice.Yank(ctx, "alpha@0.9.0", true); err != nil {
		t.Fatal(err)
	}
	if n := blobFiles(t, data); n != 3 {
		t.Fatalf("%d files in the blob directory after three publishes", n)
	}
	other := map[string]string{"other": "bytes"}
	for _, c := range []struct {
		name    string
		cl      *distribution.Client
		body    []byte
		channel string
		status  int
		code    string
	}{
		{"not the owner", bob, pluginArchive(t, "alpha", "2.0.0", nil), "", 403, distribution.CodeNotOwner},
		{"another digest", alice, pluginArchive(t, "alpha", "1.0.0", other), "", 409, distribution.CodeVersionConflict},
		{"yanked", alice, pluginArchive(t, "alpha", "0.9.0", nil), "", 409, distribution.CodeReleaseYanked},
		{"releases quota", alice, pluginArchive(t, "alpha", "2.0.0", nil), "", 409, distribution.CodeQuotaExceeded},
		{"channels quota", alice, pluginArchive(t, "beta", "2.0.0", nil), "edge", 409, distribution.CodeQuotaExceeded},
	} {
		_, err := c.cl.Publish(ctx, c.body, c.channel)
		if st, code := statusOf(err); st != c.status || code != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, st, code, c.status, c.code)
		}
		if n := blobFiles(t, data); n != 3 {
			t.Errorf("%s: the refused publish left %d files in the blob directory", c.name, n-3)
		}
	}
	// Within the quotas, the same publishes are accepted.
	if _, err := alice.Publish(ctx, pluginArchive(t, "beta", "2.0.0", nil), ""); err != nil {
		t.Fatalf("a second release on an existing channel: %v", err)
	}
	if n := blobFiles(t, data); n != 4 {
		t.Fatalf("%d files in the blob directory after four publishes", n)
	}
}

// brokenBlobs is a blob store whose writes fail when broken is set,
// before they ask whether to keep the blob.
type brokenBlobs struct {
	blobs.Store
	broken atomic.Bool
}

var errBrokenBlobs = errors.New("the blob store is broken")

func (b *brokenBlobs) PutIf(ctx context.Context, digest string, data []byte, keep func() error) error {
	if b.broken.Load() {
		return errBrokenBlobs
	}
	return blobs.PutIf(ctx, b.Store, digest, data, keep)
}

// TestPublishRefusalBeatsBlobError: the refusal and the blob's write run
// side by side; when both fail, the answer is the refusal (403), as when
// the refusal came first, and a publish that would be accepted gets the
// blob store's failure (500).
func TestPublishRefusalBeatsBlobError(t *testing.T) {
	ctx := context.Background()
	bb := &brokenBlobs{}
	url, _ := newPublishServer(t, Config{}, nil, func(b blobs.Store) blobs.Store { bb.Store = b; return bb })
	alice, bob := client(url, "a-secret"), client(url, "b-secret")
	if _, err := alice.Publish(ctx, pluginArchive(t, "alpha", "1.0.0", nil), ""); err != nil {
		t.Fatal(err)
	}
	bb.broken.Store(true)
	if _, err := bob.Publish(ctx, pluginArchive(t, "alpha", "2.0.0", nil), ""); !isStatus(err, 403, distribution.CodeNotOwner) {
		t.Fatalf("a non-owner's publish with the blob store broken: %v, want 403 not_owner", err)
	}
	if _, err := alice.Publish(ctx, pluginArchive(t, "alpha", "2.0.0", nil), ""); !isStatus(err, 500, "") {
		t.Fatalf("the owner's publish with the blob store broken: %v, want a 500", err)
	}
}

// isStatus reports whether err is a StatusError of status and, unless
// code is empty, code.
func isStatus(err error, status int, code string) bool {
	st, c := statusOf(err)
	return st == status && (code == "" || c == code)
}

// gatedStore holds each Publish until its gate is opened.
type gatedStore struct {
	store.Store
	entered chan string
	gate    chan struct{}
}

func (g *gatedStore) Publish(ctx context.Context, nr store.NewRelease) (distribution.Release, bool, error) {
	g.entered <- nr.Release.PluginID
	<-g.gate
	return g.Store.Publish(ctx, nr)
}

// TestCommitHoldsNoPublishSlot: a publish gives its slot back once its
// blob is written, so that a publish waiting on the store's commit does
// not keep the next from being checked: with one slot, a second publish
// reaches the store while the first is still there.
func TestCommitHoldsNoPublishSlot(t *testing.T) {
	ctx := context.Background()
	g := &gatedStore{entered: make(chan string, 2), gate: make(chan struct{})}
	url, data := newPublishServer(t, Config{MaxConcurrentPublishes: 1},
		func(s store.Store) store.Store { g.Store = s; return g }, nil)
	alice := client(url, "a-secret")
	done := make(chan error, 2)
	for _, body := range [][]byte{pluginArchive(t, "first", "1.0.0", nil), pluginArchive(t, "second", "1.0.0", nil)} {
		go func() {
			_, err := alice.Publish(ctx, body, "")
			done <- err
		}()
	}
	for range 2 {
		select {
		case <-g.entered:
		case <-time.After(10 * time.Second):
			close(g.gate)
			t.Fatal("the second publish waited for the first one's commit to be checked")
		}
	}
	if n := blobFiles(t, data); n != 2 {
		t.Fatalf("%d blobs written before the commits, want 2", n)
	}
	close(g.gate)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
