package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/store"
)

func openTest(t *testing.T) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "registry.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newRelease(plugin, version, digest, channel string) store.NewRelease {
	return store.NewRelease{
		Name:    plugin,
		Channel: channel,
		Release: distribution.Release{
			ID:             distribution.ReleaseID(plugin, version, digest),
			PluginID:       plugin,
			Version:        version,
			Description:    plugin + " " + version,
			ArtifactDigest: digest,
			Size:           42,
			PublishedAt:    time.Now(),
		},
	}
}

func digest(n int) string { return fmt.Sprintf("sha256:%064x", n) }

func TestPublishIsIdempotentAndReleasesImmutable(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	rel, created, err := db.Publish(ctx, newRelease("demo", "1.0.0", digest(1), "stable"))
	if err != nil || !created || rel.ID != "demo@1.0.0" {
		t.Fatalf("first publish: %+v %v %v", rel, created, err)
	}
	if _, created, err := db.Publish(ctx, newRelease("demo", "1.0.0", digest(1), "beta")); err != nil || created {
		t.Fatalf("same digest again: created=%v err=%v", created, err)
	}
	if _, _, err := db.Publish(ctx, newRelease("demo", "1.0.0", digest(2), "stable")); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("other digest: %v, want ErrConflict", err)
	}
	for _, ch := range []string{"stable", "beta"} {
		got, err := db.Channel(ctx, "demo", ch)
		if err != nil || got.ArtifactDigest != digest(1) {
			t.Fatalf("channel %s: %+v %v", ch, got, err)
		}
	}
	if ok, err := db.HasArtifact(ctx, digest(1)); !ok || err != nil {
		t.Fatalf("HasArtifact = %v %v", ok, err)
	}
	if ok, err := db.HasArtifact(ctx, digest(2)); ok || err != nil {
		t.Fatalf("HasArtifact(unpublished) = %v %v", ok, err)
	}
}

func TestYankHidesFromChannelOnly(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	db.Publish(ctx, newRelease("demo", "1.0.0", digest(1), "stable"))
	db.Publish(ctx, newRelease("demo", "2.0.0", digest(2), "stable"))
	if _, err := db.SetYanked(ctx, "demo@2.0.0", true); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Channel(ctx, "demo", "stable"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("channel on yanked release: %v", err)
	}
	if rel, err := db.Release(ctx, "demo@2.0.0"); err != nil || !rel.Yanked {
		t.Fatalf("release by id: %+v %v", rel, err)
	}
	if ok, _ := db.HasArtifact(ctx, digest(2)); !ok {
		t.Fatal("a yanked artifact must stay downloadable")
	}
	if _, err := db.SetChannel(ctx, "demo", "stable", "demo@2.0.0"); !errors.Is(err, store.ErrYanked) {
		t.Fatalf("channel to yanked: %v", err)
	}
	if _, _, err := db.Publish(ctx, newRelease("demo", "2.0.0", digest(2), "stable")); !errors.Is(err, store.ErrYanked) {
		t.Fatalf("republish yanked: %v", err)
	}
	if _, err := db.SetChannel(ctx, "demo", "stable", "demo@1.0.0"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetChannel(ctx, "other", "stable", "demo@1.0.0"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("channel of another plugin: %v", err)
	}
	if _, err := db.SetYanked(ctx, "nope@1", true); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("yank unknown: %v", err)
	}
	cat, err := db.Catalog(ctx)
	if err != nil || len(cat) != 1 || cat[0].Channels["stable"] != "demo@1.0.0" || len(cat[0].Releases) != 2 {
		t.Fatalf("catalog: %+v %v", cat, err)
	}
}

func TestInstallations(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	now := time.Unix(1700000000, 0).UTC()
	for _, in := range []distribution.Installation{
		{ID: "a", PluginID: "demo", ReleaseID: "demo@1", ArtifactDigest: digest(1), Status: "installed", ReportedAt: now},
		{ID: "b", PluginID: "other", ReleaseID: "other@1", ArtifactDigest: digest(2), Status: "installed", ReportedAt: now},
		{ID: "a", PluginID: "demo", ReleaseID: "demo@2", ArtifactDigest: digest(3), Status: "updated", ReportedAt: now},
	} {
		if err := db.PutInstallation(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	all, _ := db.Installations(ctx, "")
	demo, _ := db.Installations(ctx, "demo")
	if len(all) != 2 || len(demo) != 1 || demo[0].ReleaseID != "demo@2" || !demo[0].ReportedAt.Equal(now) {
		t.Fatalf("all=%+v demo=%+v", all, demo)
	}
}

func TestConcurrentPublishes(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, conflicts := 0, 0
	for i := range 20 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, _, err := db.Publish(ctx, newRelease(fmt.Sprintf("p%d", i), "1.0.0", digest(i), "stable")); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			_, c, err := db.Publish(ctx, newRelease("same", "1.0.0", digest(100+i%2), "stable"))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, store.ErrConflict):
				conflicts++
			case err != nil:
				t.Error(err)
			case c:
				created++
			}
		}()
	}
	wg.Wait()
	cat, _ := db.Catalog(ctx)
	if len(cat) != 21 || created != 1 || conflicts == 0 {
		t.Fatalf("plugins=%d created=%d conflicts=%d", len(cat), created, conflicts)
	}
}
