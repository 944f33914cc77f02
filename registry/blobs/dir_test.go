package blobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func TestDirPutOpen(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	// A temporary file from a crashed Put is swept on open.
	os.MkdirAll(filepath.Join(root, "tmp"), 0o755)
	os.WriteFile(filepath.Join(root, "tmp", "put-crashed"), []byte("partial"), 0o644)
	d, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(filepath.Join(root, "tmp")); len(left) != 0 {
		t.Fatalf("tmp not swept: %v", left)
	}
	data := []byte("artifact bytes")
	dg := digestOf(data)
	for range 2 { // idempotent
		if err := d.Put(ctx, dg, data); err != nil {
			t.Fatal(err)
		}
	}
	r, size, err := d.Open(ctx, dg)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	if string(got) != string(data) || size != int64(len(data)) {
		t.Fatalf("got %q size %d", got, size)
	}
	if err := d.Put(ctx, digestOf([]byte("other")), data); !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("mismatch: %v", err)
	}
	if _, _, err := d.Open(ctx, digestOf([]byte("absent"))); !errors.Is(err, ErrNotFound) {
		t.Fatalf("absent: %v", err)
	}
	for _, bad := range []string{"", "sha256:../../etc/passwd", "sha256:" + string(make([]byte, 64)), "SHA256:" + dg[7:], "sha256:" + dg[7:69] + "AB"} {
		if _, _, err := d.Open(ctx, bad); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("Open(%q) = %v, want an invalid digest error", bad, err)
		}
	}
}

// TestRemoveIfOlder: a blob refreshed by a Put after the collector looked
// at it survives; a stale one goes; one the collector set aside when it
// crashed is put back by OpenDir.
func TestRemoveIfOlder(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("orphan")
	dg := digestOf(data)
	d.Put(ctx, dg, data)
	file := filepath.Join(root, "sha256", dg[7:9], dg[7:])
	old := time.Now().Add(-time.Hour)
	os.Chtimes(file, old, old)
	cutoff := time.Now().Add(-time.Minute)

	var seen []Info
	d.Walk(ctx, func(i Info) error { seen = append(seen, i); return nil })
	if len(seen) != 1 || seen[0].Digest != dg || seen[0].Size != int64(len(data)) || !seen[0].ModTime.Before(cutoff) {
		t.Fatalf("walk: %+v", seen)
	}
	// A publish puts the same bytes again between the look and the
	// removal: the blob is fresh, and stays.
	if err := d.Put(ctx, dg, data); err != nil {
		t.Fatal(err)
	}
	if removed, err := d.RemoveIfOlder(ctx, dg, cutoff); removed || err != nil {
		t.Fatalf("a refreshed blob: removed=%v %v", removed, err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatal("the refreshed blob is gone")
	}
	os.Chtimes(file, old, old)
	if removed, err := d.RemoveIfOlder(ctx, dg, cutoff); !removed || err != nil {
		t.Fatalf("a stale blob: removed=%v %v", removed, err)
	}
	if removed, err := d.RemoveIfOlder(ctx, dg, cutoff); removed || err != nil {
		t.Fatalf("an absent blob: removed=%v %v", removed, err)
	}
	// A Put after the removal writes it anew.
	if err := d.Put(ctx, dg, data); err != nil {
		t.Fatal(err)
	}
	// A crash between setting aside and deciding: OpenDir puts it back.
	os.Rename(file, filepath.Join(root, "tmp", "gc-"+dg[7:]))
	if _, err := OpenDir(root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatal("a blob set aside by a crashed collector was lost")
	}
	// Stray files in the tree are not blobs.
	os.WriteFile(filepath.Join(root, "sha256", "README"), []byte("x"), 0o644)
	seen = nil
	if err := d.Walk(ctx, func(i Info) error { seen = append(seen, i); return nil }); err != nil || len(seen) != 1 {
		t.Fatalf("walk with a stray file: %d %v", len(seen), err)
	}
}

// plainStore hides Dir's PutIf, as a store without one (S3) would.
type plainStore struct{ Store }

// TestPutIfRefusedLeavesNothing: the bytes are written and synced before
// keep is asked, but nothing is visible until it says yes; a refusal
// leaves neither a blob nor a temporary file, and does not touch a blob
// that was there before. A store without PutIf is not even asked to Put.
func TestPutIfRefusedLeavesNothing(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	tmpFiles := func() int {
		entries, _ := os.ReadDir(filepath.Join(root, "tmp"))
		return len(entries)
	}
	refused := errors.New("refused")
	data := []byte("refused bytes")
	dg := digestOf(data)
	for _, s := range []Store{d, plainStore{d}} {
		calls := 0
		err := PutIf(ctx, s, dg, data, func() error {
			calls++
			if _, _, err := d.Open(ctx, dg); !errors.Is(err, ErrNotFound) {
				t.Errorf("%T: the blob is visible before keep answered: %v", s, err)
			}
			if _, ok := s.(*Dir); ok && tmpFiles() != 1 {
				t.Errorf("keep was asked before the bytes were written: %d temporary files", tmpFiles())
			}
			return refused
		})
		if !errors.Is(err, refused) || calls != 1 {
			t.Fatalf("%T: PutIf = %v after %d calls of keep, want keep's error after one", s, err, calls)
		}
		if _, _, err := d.Open(ctx, dg); !errors.Is(err, ErrNotFound) {
			t.Fatalf("%T: a refused PutIf left the blob: %v", s, err)
		}
		if n := tmpFiles(); n != 0 {
			t.Fatalf("%T: a refused PutIf left %d temporary files", s, n)
		}
	}

	// Accepted, the blob is there; refused again, it stays as it was.
	if err := PutIf(ctx, d, dg, data, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "sha256", dg[7:9], dg[7:])
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	os.Chtimes(file, old, old)
	calls := 0
	if err := d.PutIf(ctx, dg, data, func() error { calls++; return refused }); !errors.Is(err, refused) || calls != 1 {
		t.Fatalf("PutIf of a stored blob, refused: %v after %d calls", err, calls)
	}
	if fi, err := os.Stat(file); err != nil || !fi.ModTime().Equal(old) {
		t.Fatalf("a refused PutIf changed the stored blob: %v", err)
	}
	if err := d.PutIf(ctx, dg, data, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(file); !fi.ModTime().After(old) {
		t.Fatal("an accepted PutIf of a stored blob did not refresh it for the collector")
	}
	// A digest that does not match is refused before keep is asked.
	if err := d.PutIf(ctx, digestOf([]byte("other")), data, func() error { t.Error("keep asked"); return nil }); !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("mismatch: %v", err)
	}
}
