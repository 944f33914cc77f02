package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/plugkit/plugkit/registry/store"
	"github.com/plugkit/plugkit/registry/store/storetest"
)

// TestPointLookupsReadEveryColumn: the lookups that bypass database/sql
// return releases equal to the stored ones, also with empty and non-ASCII
// text, and not-found as store.ErrNotFound.
func TestPointLookupsReadEveryColumn(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	by := store.Actor{Identity: "alice"}
	for i, desc := range []string{"", "é 日本語 \x00 nul", "plain"} {
		r := storetest.NewRelease(by, fmt.Sprintf("p%d", i), "1.0.0", storetest.Digest(i), "stable")
		r.Release.Description = desc
		r.Release.Size = 1<<40 + int64(i)
		stored, _, err := db.Publish(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if stored.Description != desc || !stored.PublishedAt.Equal(r.Release.PublishedAt.Truncate(time.Nanosecond)) {
			t.Fatalf("stored %+v", stored)
		}
		got, err := db.Channel(ctx, r.Release.PluginID, "stable")
		if err != nil || !reflect.DeepEqual(got, stored) {
			t.Fatalf("Channel = %+v, %v; want %+v", got, err, stored)
		}
		if got, err := db.Release(ctx, stored.ID); err != nil || !reflect.DeepEqual(got, stored) {
			t.Fatalf("Release = %+v, %v; want %+v", got, err, stored)
		}
		if ok, err := db.HasArtifact(ctx, stored.ArtifactDigest); err != nil || !ok {
			t.Fatalf("HasArtifact = %v, %v", ok, err)
		}
	}
	if _, err := db.Channel(ctx, "p0", "beta"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown channel: %v", err)
	}
	if _, err := db.Release(ctx, "nope@1.0.0"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown release: %v", err)
	}
	if ok, err := db.HasArtifact(ctx, storetest.Digest(99)); err != nil || ok {
		t.Fatalf("unknown artifact: %v, %v", ok, err)
	}
}

// TestPointLookupsBindEmptyText: an empty parameter is the empty string,
// not NULL (which SQLite makes of a NULL pointer), on a fresh connection
// whose parameter memory is not allocated yet.
func TestPointLookupsBindEmptyText(t *testing.T) {
	db := openTest(t)
	if _, err := db.w.Exec(`PRAGMA foreign_keys = OFF`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.Exec(`INSERT INTO releases VALUES ('', 'p', '1.0.0', '', 'sha256:0', 1, 0, 1)`); err != nil {
		t.Fatal(err)
	}
	if rel, err := db.Release(context.Background(), ""); err != nil || rel.PluginID != "p" {
		t.Fatalf("Release(\"\") = %+v, %v", rel, err)
	}
}

// TestPointLookupsSeeOtherProcessesWrites: a write through another handle
// on the same file (as plugkit serve token or a second process would make)
// is visible to the very next lookup: nothing is cached.
func TestPointLookupsSeeOtherProcessesWrites(t *testing.T) {
	ctx := context.Background()
	reader, path := openTestPath(t)
	writer, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	by := store.Actor{Identity: "alice"}
	for v := range 20 {
		r := storetest.NewRelease(by, "p", fmt.Sprintf("1.0.%d", v), storetest.Digest(v), "stable")
		stored, _, err := writer.Publish(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := reader.Channel(ctx, "p", "stable"); err != nil || got.ID != stored.ID {
			t.Fatalf("after publish %d: %+v, %v", v, got, err)
		}
		if _, err := writer.SetYanked(ctx, by, stored.ID, true); err != nil {
			t.Fatal(err)
		}
		if got, err := reader.Channel(ctx, "p", "stable"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("after yank %d: %+v, %v", v, got, err)
		}
		if got, err := reader.Release(ctx, stored.ID); err != nil || !got.Yanked {
			t.Fatalf("yanked release %d: %+v, %v", v, got, err)
		}
	}
}

// TestPointLookupsConcurrent: more goroutines than connections look up
// while a writer publishes; each gets its own plugin's release.
func TestPointLookupsConcurrent(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	by := store.Actor{Identity: "alice"}
	const plugins = 4 * 4
	for i := range plugins {
		if _, _, err := db.Publish(ctx, storetest.NewRelease(by, fmt.Sprintf("p%02d", i), "1.0.0", storetest.Digest(i), "stable")); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, plugins+1)
	wg.Go(func() {
		for v := range 20 {
			if _, _, err := db.Publish(ctx, storetest.NewRelease(by, "other", fmt.Sprintf("1.0.%d", v), storetest.Digest(1000+v), "stable")); err != nil {
				errs <- err
				return
			}
		}
	})
	for i := range plugins {
		wg.Go(func() {
			id := fmt.Sprintf("p%02d", i)
			for range 200 {
				rel, err := db.Channel(ctx, id, "stable")
				if err != nil || rel.PluginID != id || rel.ArtifactDigest != storetest.Digest(i) {
					errs <- fmt.Errorf("%s: %+v, %v", id, rel, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestPointLookupsAfterClose fail rather than wait for a connection that
// will never come back.
func TestPointLookupsAfterClose(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "registry.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Channel(context.Background(), "p", "stable"); !errors.Is(err, errClosed) {
		t.Fatalf("Channel after Close: %v", err)
	}
	if _, err := db.HasArtifact(context.Background(), storetest.Digest(1)); !errors.Is(err, errClosed) {
		t.Fatalf("HasArtifact after Close: %v", err)
	}
}

// TestHeldLookupEnds: the read transaction a lookup leaves held ends once
// lookups stop, so that a checkpoint from another connection (here one
// that waits for nothing) can copy the whole WAL and truncate it.
func TestHeldLookupEnds(t *testing.T) {
	ctx := context.Background()
	db, path := openTestPath(t)
	r := storetest.NewRelease(store.Actor{Identity: "alice"}, "p", "1.0.0", storetest.Digest(1), "stable")
	if _, _, err := db.Publish(ctx, r); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Channel(ctx, "p", "stable"); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var busy, log, done int
		if err := other.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &log, &done); err != nil {
			t.Fatal(err)
		}
		if busy == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a lookup's read transaction still blocks a checkpoint 5 s after the lookup")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestHeldLookupLetsCheckpointsThrough: while lookups come more often than
// a held transaction lingers, the checkpoints after this process's commits
// still copy the whole WAL, so that it is reused from its start instead of
// growing with every publish. (Lookups without any pause would starve the
// checkpoints as in any WAL database, with or without holding.)
func TestHeldLookupLetsCheckpointsThrough(t *testing.T) {
	ctx := context.Background()
	db, path := openTestPath(t)
	// Checkpoint after every 8 pages rather than 1000, to need few publishes.
	if _, err := db.w.Exec(`PRAGMA wal_autocheckpoint = 8`); err != nil {
		t.Fatal(err)
	}
	by := store.Actor{Identity: "alice"}
	if _, _, err := db.Publish(ctx, storetest.NewRelease(by, "p", "1.0.0", storetest.Digest(0), "stable")); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := db.Channel(ctx, "p", "stable"); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(linger / 10)
		}
	})
	const publishes = 200
	for v := range publishes {
		if _, _, err := db.Publish(ctx, storetest.NewRelease(by, "q", fmt.Sprintf("1.0.%d", v), storetest.Digest(1+v), "stable")); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	// Without checkpoints, each publish adds some pages of 4 KiB.
	if limit := int64(256 << 10); fi.Size() > limit {
		t.Fatalf("WAL is %d bytes after %d publishes under lookups; want <= %d", fi.Size(), publishes, limit)
	}
}

// walIndexPages is the database size in pages that the WAL index at
// path+"-shm" records: nPage of its header, a u32 at byte 20 in native
// byte order (https://sqlite.org/walformat.html, "the WAL-index header").
// The layout is shared by every process that opens the database, whatever
// its SQLite version, so it does not move. While it is 0, each read
// transaction takes the size from the database file with an fstat.
func walIndexPages(t *testing.T, path string) uint32 {
	t.Helper()
	b, err := os.ReadFile(path + "-shm")
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 24 {
		t.Fatalf("WAL index of %d bytes", len(b))
	}
	return binary.NativeEndian.Uint32(b[20:])
}

// TestRestartedReaderKnowsDatabaseSize: a store opened again after every
// handle was closed (a server restart: SQLite removes the WAL and its
// index at the last close) and that then only reads finds the database
// size in the WAL index, so that its lookups make no fstat each (under
// strace, one per request before Open settled the index).
func TestRestartedReaderKnowsDatabaseSize(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "registry.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r := storetest.NewRelease(store.Actor{Identity: "alice"}, "p", "1.0.0", storetest.Digest(1), "stable")
	if _, _, err := db.Publish(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-shm"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the WAL index outlived the last close (%v): this test restarts nothing", err)
	}
	db, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Channel(ctx, "p", "stable"); err != nil {
		t.Fatal(err)
	}
	if n := walIndexPages(t, path); n == 0 {
		t.Fatal("the WAL index of a reopened database does not know its size: every lookup stats the file")
	}
}

// TestOpenWaitsForNoWriter: settling the WAL index is not worth waiting
// for another process's write transaction (its commit records the size
// anyway): Open returns at once, and lookups work.
func TestOpenWaitsForNoWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "registry.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	start := time.Now()
	db, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Far below the busy timeout of 10 s that any other write would wait.
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Open waited %v for another process's write transaction", d)
	}
	if _, err := db.Channel(ctx, "p", "stable"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("lookup while another process writes: %v", err)
	}
	if n := walIndexPages(t, path); n != 0 {
		t.Fatalf("the WAL index knows %d pages before any commit: this test proves nothing", n)
	}
	if _, err := tx.Exec(`INSERT INTO plugins VALUES ('p', 'p', '', 1)`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := walIndexPages(t, path); n == 0 {
		t.Fatal("the other process's commit did not record the size")
	}
}
