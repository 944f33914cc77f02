//go:build unix

package snapshot

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// list returns at most n entries of the directory; more only when it
// holds more. It lists a duplicate of the descriptor through an os.File,
// which closes the duplicate and leaves the handle's own open.
func (d *dirHandle) list(n int) ([]dirEntry, error) {
	fd, err := unix.Dup(d.fd)
	if err != nil {
		return nil, &fs.PathError{Op: "dup", Path: d.name, Err: err}
	}
	f := os.NewFile(uintptr(fd), d.name)
	defer f.Close()
	return listAtMost(f, n)
}
