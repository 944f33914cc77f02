package blobs

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/plugkit/plugkit/archive"
)

// Dir is a Store in a directory: the blob "sha256:abcd…" is the file
// sha256/ab/abcd…, and writes go through tmp/ under the same root, so the
// final rename never crosses filesystems.
type Dir struct {
	root string
}

var _ Store = (*Dir)(nil)

// OpenDir opens or creates a blob directory at root. Temporary files left
// by a crash in the middle of a Put are removed: they were never renamed
// into place, so nothing refers to them.
func OpenDir(root string) (*Dir, error) {
	for _, d := range []string{"sha256", "tmp"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return nil, err
		}
	}
	tmps, err := os.ReadDir(filepath.Join(root, "tmp"))
	if err != nil {
		return nil, err
	}
	for _, e := range tmps {
		os.Remove(filepath.Join(root, "tmp", e.Name()))
	}
	return &Dir{root: root}, nil
}

// path returns the file of digest. The digest becomes a file name, so it
// must parse strictly: nothing but "sha256:" and 64 lowercase hex digits
// may reach the filesystem.
func (d *Dir) path(digest string) (string, error) {
	digest, err := archive.ParseDigest(digest)
	if err != nil {
		return "", err
	}
	hexPart := strings.TrimPrefix(digest, "sha256:")
	return filepath.Join(d.root, "sha256", hexPart[:2], hexPart), nil
}

// Put implements Store: write to a temporary file, fsync it, rename it into
// place and fsync the directory, so that after a crash the blob is either
// complete or absent.
func (d *Dir) Put(ctx context.Context, digest string, data []byte) error {
	final, err := d.path(digest)
	if err != nil {
		return err
	}
	if archive.Digest(data) != digest {
		return ErrDigestMismatch
	}
	if _, err := os.Stat(final); err == nil {
		return nil // content-addressed: the same name holds the same bytes
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	dir := filepath.Dir(final)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Join(d.root, "tmp"), "put-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// Open implements Store. The reader is the *os.File itself, so that
// net/http can hand it to sendfile.
func (d *Dir) Open(ctx context.Context, digest string) (io.ReadSeekCloser, int64, error) {
	p, err := d.path(digest)
	if err != nil {
		return nil, 0, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, ErrNotFound
	}
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}
