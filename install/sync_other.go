//go:build !linux

package install

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// syncFS makes everything written below dir durable, one fsync per file
// and directory where the system has no syncfs. Windows cannot flush a
// read-only handle; there the rename's own ordering is all there is.
func syncFS(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !(d.IsDir() || d.Type().IsRegular()) {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		return f.Sync()
	})
}
