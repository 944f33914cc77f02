// Package atomicfile writes files that are either untouched or complete:
// the bytes go to a temporary sibling, which is synced and renamed over
// the target only when everything was written.
package atomicfile

import (
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
		return nil, err
	}
	return &File{File: f, path: path, perm: perm}, nil
}

// Commit syncs the file and renames it over path. On error the temporary
// file is removed and path is untouched.
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
	}
	return err
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
	if _, err := f.File.Write(b); err != nil {
		return err
	}
	return f.Commit()
}
