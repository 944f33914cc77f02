package install

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// writeFileAtomic writes b as name so that name is always either its old
// content or all of b, durably: a temporary sibling is written and synced,
// renamed over name, and name's directory is synced so the rename itself
// survives a crash.
func writeFileAtomic(name string, b []byte, perm fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		crashPoint(filepath.Base(name) + "-synced")
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(name))
}

// syncDir makes the entries of dir durable (a rename into it, say).
// Windows cannot open a directory to flush it; NTFS journals renames.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
