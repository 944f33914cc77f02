package install

import (
	"io/fs"
	"path/filepath"

	"github.com/plugkit/plugkit/internal/atomicfile"
)

// writeFileAtomic writes b as name so that name is always either its old
// content or all of b, durably (internal/atomicfile: a synced temporary
// sibling renamed over name, then the directory synced).
func writeFileAtomic(name string, b []byte, perm fs.FileMode) error {
	f, err := atomicfile.Create(name, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(b); err != nil {
		return err
	}
	crashPoint(filepath.Base(name) + "-written")
	return f.Commit()
}
