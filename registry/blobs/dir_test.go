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
