//go:build unix

package cli

import (
	"fmt"
	"os"
	"syscall"
)

// execFull replaces this process with plugkit-full: the pid, the open
// files (stdin, stdout, stderr), the signal dispositions and the exit
// status are then plugkit-full's, as if the user had run it.
func execFull(path string, args []string) error {
	err := syscall.Exec(path, append([]string{path}, args...), os.Environ())
	return Usage(fmt.Errorf("run %s: %w", path, err))
}
