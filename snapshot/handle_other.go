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

// list returns at most n entries of the directory; more only when it
// holds more.
func (d *dirHandle) list(n int) ([]dirEntry, error) {
	f, err := d.r.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return listAtMost(f, n)
}

func (d *dirHandle) openDir(rel string) (*dirHandle, error) {
	r, err := d.r.OpenRoot(rel)
	if err != nil {
		return nil, err
	}
	return &dirHandle{r}, nil
}

// statFile returns the size and permission bits of the regular file rel
// below d, as readFile would judge it, without reading it.
func (d *dirHandle) statFile(rel string, max int64) (int64, fs.FileMode, error) {
	fi, err := d.r.Lstat(rel)
	switch {
	case err != nil:
		return 0, 0, err
	case !fi.Mode().IsRegular():
		return 0, 0, errNotRegular
	case fi.Size() > max:
		return 0, 0, errTooLarge
	}
	return fi.Size(), fi.Mode().Perm(), nil
}

// openStream opens the regular file rel below d for reading, as readFile
// would judge it, and returns its size.
func (d *dirHandle) openStream(rel string, max int64) (io.ReadCloser, int64, error) {
	f, err := d.r.Open(rel)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
	case !fi.Mode().IsRegular():
		err = errNotRegular
	case fi.Size() > max:
		err = errTooLarge
	default:
		return f, fi.Size(), nil
	}
	f.Close()
	return nil, 0, err
}

// replaced is false here: os.Root reports a link or a file in the way
// with errors of its own, which are returned as they are.
func replaced(error) bool { return false }

// readFile reads the regular file rel below d, as its Unix twin does, in
// memory of its own: io.ReadAll learns the size as it reads.
func (d *dirHandle) readFile(rel string, max int64, _ *chunk) ([]byte, fs.FileMode, error) {
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
func (d *dirHandle) mkdir(name string, _ fs.FileMode) (*dirHandle, error) {
	if err := d.r.Mkdir(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return d.openDir(name)
}

// create writes a new file name inside d with exactly mode, and flushes
// it to stable storage.
func (d *dirHandle) create(name string, data []byte, mode, _ fs.FileMode) error {
	f, err := d.r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode.Perm())
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode.Perm())
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir and syncTree do nothing here: directories cannot be flushed
// outside Unix, and each file was flushed as it was written.
func (d *dirHandle) syncDir() error  { return nil }
func (d *dirHandle) syncTree() error { return nil }

// syncDir does nothing outside Unix (see the method).
func syncDir(string) error { return nil }

// processUmask counts every bit as masked: modes are always set again
// after creation.
func processUmask() fs.FileMode { return 0o777 }
