//go:build !unix

package snapshot

import (
	"errors"
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

// mkdir makes the directory name inside d, unless it exists, and opens it.
func (d *dirHandle) mkdir(name string) (*dirHandle, error) {
	if err := d.r.Mkdir(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return d.openDir(name)
}

// create writes a new file name inside d with exactly mode.
func (d *dirHandle) create(name string, data []byte, mode fs.FileMode) error {
	f, err := d.r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode.Perm())
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode.Perm())
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
