package storage

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/plugkit/plugkit/registry/blobs"
)

// closingBlobs is a blob directory that holds something to release, as
// the S3 store's idle connections are: it records its Close.
type closingBlobs struct {
	blobs.Store
	closed int
}

var errBlobsClose = errors.New("blobs close failed")

func (c *closingBlobs) Close() error {
	c.closed++
	return errBlobsClose
}

// TestStorageCloseClosesBlobs: closing the storage closes the store and
// then the blob store when it is an io.Closer, and reports its error; a
// blob store with nothing to close (the directory) closes cleanly.
func TestStorageCloseClosesBlobs(t *testing.T) {
	open := func(b blobs.Store) *Storage {
		st, err := OpenStore(context.Background(), Config{DataDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return &Storage{Store: st, Blobs: b}
	}
	dir, err := blobs.OpenDir(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := open(dir).Close(); err != nil {
		t.Errorf("storage on a blob directory: Close: %v", err)
	}
	cb := &closingBlobs{Store: dir}
	if err := open(cb).Close(); !errors.Is(err, errBlobsClose) || cb.closed != 1 {
		t.Errorf("Close: %v, blob store closed %d times; want its error and once", err, cb.closed)
	}
}
