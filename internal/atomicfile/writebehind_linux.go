package atomicfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing the n bytes of f from
// off to the disk, and does not wait (SYNC_FILE_RANGE_WRITE). Errors are
// left to the sync at Commit, which waits for every byte.
func startWriteback(f *os.File, off, n int64) {
	unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
