package blobs

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/plugkit/plugkit/archive"
)

// Dir is a Store in a directory: the blob "sha256:abcd…" is the file
// sha256/ab/abcd…, and writes go through tmp/ under the same root, so the
// final rename never crosses filesystems.
type Dir struct {
	root string
}

var (
	_ Store      = (*Dir)(nil)
	_ Sweeper    = (*Dir)(nil)
	_ CondPutter = (*Dir)(nil)
)

// OpenDir opens or creates a blob directory at root. Temporary files left
// by a crash in the middle of a Put are removed: they were never renamed
// into place, so nothing refers to them. A blob the collector had set
// aside when it crashed is put back, to be judged again.
func OpenDir(root string) (*Dir, error) {
	for _, d := range []string{"sha256", "tmp"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return nil, err
		}
	}
	d := &Dir{root: root}
	tmps, err := os.ReadDir(filepath.Join(root, "tmp"))
	if err != nil {
		return nil, err
	}
	for _, e := range tmps {
		tmp := filepath.Join(root, "tmp", e.Name())
		if hexPart, ok := strings.CutPrefix(e.Name(), "gc-"); ok {
			if final, err := d.path("sha256:" + hexPart); err == nil {
				if os.MkdirAll(filepath.Dir(final), 0o755) == nil && os.Rename(tmp, final) == nil {
					continue
				}
			}
		}
		os.Remove(tmp)
	}
	return d, nil
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
	return d.PutIf(ctx, digest, data, func() error { return nil })
}

// PutIf implements CondPutter: keep is asked once the temporary file is
// written and synced, before the rename; a refusal removes the file.
func (d *Dir) PutIf(ctx context.Context, digest string, data []byte, keep func() error) error {
	final, err := d.path(digest)
	if err != nil {
		return err
	}
	if archive.Digest(data) != digest {
		return ErrDigestMismatch
	}
	keep = sync.OnceValue(keep)
	// Content-addressed: the same name holds the same bytes, so an
	// existing blob only needs to look fresh to the collector. If the
	// collector took it away in between, Chtimes fails and the blob is
	// written anew.
	if _, err := os.Lstat(final); err == nil {
		if err := keep(); err != nil {
			return err
		}
		now := time.Now()
		if err := os.Chtimes(final, now, now); err == nil {
			return nil
		}
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
	if err := keep(); err != nil {
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

// Walk implements Sweeper. Files whose names are not digests are skipped.
func (d *Dir) Walk(ctx context.Context, fn func(Info) error) error {
	base := filepath.Join(d.root, "sha256")
	return filepath.WalkDir(base, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		digest, err := archive.ParseDigest("sha256:" + e.Name())
		if err != nil || filepath.Base(filepath.Dir(p)) != e.Name()[:2] {
			return nil
		}
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed meanwhile
		}
		if err != nil {
			return err
		}
		return fn(Info{Digest: digest, Size: fi.Size(), ModTime: fi.ModTime()})
	})
}

// RemoveIfOlder implements Sweeper. The blob is first renamed out of
// place, so that no Put can refresh it unseen: a Put before the rename
// shows in its modification time, and the blob is put back; a Put after
// it finds no blob and writes a new one.
func (d *Dir) RemoveIfOlder(ctx context.Context, digest string, cutoff time.Time) (bool, error) {
	final, err := d.path(digest)
	if err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	aside := filepath.Join(d.root, "tmp", "gc-"+filepath.Base(final))
	if err := os.Rename(final, aside); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	fi, err := os.Stat(aside)
	if err != nil {
		return false, errors.Join(err, os.Rename(aside, final))
	}
	if !fi.ModTime().Before(cutoff) {
		return false, os.Rename(aside, final)
	}
	if err := os.Remove(aside); err != nil {
		return false, err
	}
	return true, syncDir(filepath.Dir(final))
}
