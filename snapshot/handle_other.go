//go:build !unix

package snapshot

import (
	"io"
	"io/fs"
	"os"
)

// dirHandle is an open directory below the plugin root. Outside Unix it is
// an os.Root, which refuses to follow a link out of the directory.
type dirHandle struct{ r *os.Root }

func openRootHandle(real string) (*dirHandle, error) {
	r, err := os.OpenRoot(real)
	if err != nil {
		return nil, err
	}
	return &dirHandle{r}, nil
}

func (d *dirHandle) close() { d.r.Close() }

func (d *dirHandle) list() ([]fs.DirEntry, error) {
	f, err := d.r.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

func (d *dirHandle) openDir(rel string) (*dirHandle, error) {
	r, err := d.r.OpenRoot(rel)
	if err != nil {
		return nil, err
	}
	return &dirHandle{r}, nil
}

func (d *dirHandle) readFile(rel string, max int64) ([]byte, fs.FileMode, error) {
	f, err := d.r.Open(rel)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, errNotRegular
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, 0, err
	}
	if int64(len(b)) > max {
		return nil, 0, errTooLarge
	}
	return b, fi.Mode().Perm(), nil
}
