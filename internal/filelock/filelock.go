// Package filelock takes exclusive locks on files, between processes, that
// the kernel drops when the holder ends: a process that is killed never
// leaves its lock behind. The plugin home's writer lock and the registry
// server's data directory lock are such locks.
package filelock

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/plugkit/plugkit/internal/terminal"
)

// ErrLocked is TryLock's answer when another holder has the lock.
var ErrLocked = errors.New("locked by another process")

// Stamp records in f, whose lock the caller holds, who holds it (this
// process and since when), for Holder to tell whoever finds it taken.
func Stamp(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := fmt.Fprintf(f, "pid %d since %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	return err
}

// Holder is what the holder of f's lock recorded with Stamp ("pid 12 since
// 2006-01-02T15:04:05Z"), safe to print; "" when nothing is recorded.
func Holder(f *os.File) string {
	b := make([]byte, 128)
	n, _ := f.ReadAt(b, 0)
	return terminal.Safe(strings.TrimSpace(string(b[:n])))
}
