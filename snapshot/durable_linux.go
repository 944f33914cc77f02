package snapshot

import (
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// syncEachFile is false on Linux: one syncfs flushes a whole new tree,
// where an fsync per file would wait for the disk once per file.
const syncEachFile = false

// syncTree flushes the filesystem that holds the tree below d, as
// "sync -f DIR" does.
func (d *dirHandle) syncTree() error {
	if err := unix.Syncfs(d.fd); err != nil {
		return &fs.PathError{Op: "syncfs", Path: d.name, Err: err}
	}
	return nil
}

// processUmask is the umask, read from /proc/self/status (Linux 4.7 and
// later): setting the umask to read it would race with the process's other
// threads. When it cannot be read, every bit counts as masked, so that
// modes are always set again after creation.
func processUmask() fs.FileMode {
	status, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for line := range strings.SplitSeq(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "Umask:"); ok {
				if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					return fs.FileMode(m)
				}
			}
		}
	}
	return 0o777
}
