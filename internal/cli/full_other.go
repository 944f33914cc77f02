//go:build !unix

package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// execFull runs plugkit-full as a child, where a process cannot replace
// itself: stdio passes through, and the child's exit status becomes
// plugkit's. Console interrupts reach both processes; the parent waits
// for the child to end (main's signal context keeps it from dying first).
func execFull(path string, args []string) error {
	c := exec.Command(path, args...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := c.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		return &ExitError{code: ee.ExitCode()}
	}
	return Usage(fmt.Errorf("run %s: %w", path, err))
}
