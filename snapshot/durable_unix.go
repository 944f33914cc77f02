//go:build unix && !linux

package snapshot

import "io/fs"

// syncEachFile is true where there is no syncfs: each file and directory
// of a new tree is flushed with fsync.
const syncEachFile = true

// syncTree flushes the top directory of the tree; what is below it was
// flushed as it was written.
func (d *dirHandle) syncTree() error { return fsync(d.fd, d.name) }

// processUmask counts every bit as masked where the umask cannot be read
// without setting it, so that modes are always set again after creation.
func processUmask() fs.FileMode { return 0o777 }
