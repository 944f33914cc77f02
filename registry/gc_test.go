package registry

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plugkit/plugkit/archive"

	"github.com/plugkit/plugkit/registry/storage"
)

// TestCollectGarbage: blobs left by a publish
// that crashed before its commit were never collected. The collector
// removes unreferenced blobs older than the grace period, and only those.
func TestCollectGarbage(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	db, b, err := storage.OpenDir(data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := New(Config{Store: db, Blobs: b, PublishTokens: []string{publishToken}, AnonymousRead: true})
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	age := func(body []byte) {
		hex := strings.TrimPrefix(archive.Digest(body), "sha256:")
		if err := os.Chtimes(filepath.Join(data, "blobs", "sha256", hex[:2], hex), old, old); err != nil {
			t.Fatal(err)
		}
	}
	published := pluginArchive(t, "kept", "1.0.0", nil)
	orphan := pluginArchive(t, "crashed", "1.0.0", nil)
	young := pluginArchive(t, "in-flight", "1.0.0", nil)
	ts := newServerFor(t, s)
	if _, err := client(ts.URL, publishToken).Publish(ctx, published, ""); err != nil {
		t.Fatal(err)
	}
	for _, body := range [][]byte{orphan, young} {
		if err := b.Put(ctx, archive.Digest(body), body); err != nil {
			t.Fatal(err)
		}
	}
	age(published)
	age(orphan)

	rep, err := s.CollectGarbage(ctx, GCOptions{DryRun: true})
	if err != nil || rep.Blobs != 3 || !slices.Equal(rep.Orphans, []string{archive.Digest(orphan)}) || rep.Young != 1 || !rep.DryRun {
		t.Fatalf("dry run: %+v %v", rep, err)
	}
	if _, _, err := b.Open(ctx, archive.Digest(orphan)); err != nil {
		t.Fatalf("a dry run removed a blob: %v", err)
	}
	rep, err = CollectGarbage(ctx, db, b, GCOptions{Grace: time.Hour})
	if err != nil || !slices.Equal(rep.Orphans, []string{archive.Digest(orphan)}) || rep.OrphanBytes != int64(len(orphan)) {
		t.Fatalf("collect: %+v %v", rep, err)
	}
	if _, _, err := b.Open(ctx, archive.Digest(orphan)); err == nil {
		t.Fatal("the orphan survived")
	}
	for _, body := range [][]byte{published, young} {
		if _, _, err := b.Open(ctx, archive.Digest(body)); err != nil {
			t.Fatalf("a kept blob is gone: %v", err)
		}
	}
	if _, err := client(ts.URL, "").Download(ctx, archive.Digest(published)); err != nil {
		t.Fatalf("the published artifact after collection: %v", err)
	}
	// Publishing the orphan's bytes again after all works.
	if _, err := client(ts.URL, publishToken).Publish(ctx, orphan, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := client(ts.URL, "").Download(ctx, archive.Digest(orphan)); err != nil {
		t.Fatal(err)
	}
}

// TestRunGC: the periodic collector runs until its context ends.
func TestRunGC(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	data := t.TempDir()
	db, b, err := storage.OpenDir(data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, _ := New(Config{Store: db, Blobs: b})
	orphan := pluginArchive(t, "crashed", "1.0.0", nil)
	b.Put(ctx, archive.Digest(orphan), orphan)
	done := make(chan struct{})
	go func() { s.RunGC(ctx, 10*time.Millisecond, GCOptions{Grace: time.Nanosecond}); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, _, err := b.Open(ctx, archive.Digest(orphan)); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the periodic collector never removed the orphan")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
}
