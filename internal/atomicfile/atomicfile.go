// Package atomicfile writes files that are either untouched or complete:
// the bytes go to a temporary sibling, which is synced and renamed over
// the target only when everything was written, and the directory is synced
// after the rename so that the new file survives a crash.
//
// Errors name the target path, never the temporary sibling: a user who
// asked for dist/a.tar.gz must not be told about .a.tar.gz.tmp-661274721.
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// File is a file being written in place of path. Write to it, then Commit
// to put it in place, or Abort to leave path as it was.
type File struct {
	*os.File
	path string
	perm os.FileMode
	done bool
}

// Create starts writing path (with permissions perm once committed) into a
// temporary sibling named .BASE.tmp-*.
func Create(path string, perm os.FileMode) (*File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, pathError("create", path, err)
	}
	return &File{File: f, path: path, perm: perm}, nil
}

// Write writes to the temporary file; an error names the target path.
func (f *File) Write(b []byte) (int, error) {
	n, err := f.File.Write(b)
	if err != nil {
		err = pathError("write", f.path, err)
	}
	return n, err
}

// Commit syncs the file, renames it over path and syncs the directory. On
// error the temporary file is removed and path is untouched.
func (f *File) Commit() error {
	err := f.Chmod(f.perm)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), f.path)
	}
	f.done = true
	if err != nil {
		os.Remove(f.Name())
		return pathError("write", f.path, err)
	}
	return SyncDir(filepath.Dir(f.path))
}

// Abort removes the temporary file unless Commit ran; it is safe to defer.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	os.Remove(f.Name())
}

// Write writes b as path atomically.
func Write(path string, b []byte, perm os.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(b); err != nil {
		return err
	}
	return f.Commit()
}

// SyncDir makes a rename in dir durable. Systems that cannot sync a
// directory (Windows) report an error that means nothing to do.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return pathError("sync", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) && !isDirSyncUnsupported(err) {
		return pathError("sync", dir, err)
	}
	return nil
}

// pathError restates err, which may name the temporary file, as an error
// about path.
func pathError(op, path string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}
