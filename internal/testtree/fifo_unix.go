//go:build unix

package testtree

import (
	"syscall"
	"testing"
)

// Mkfifo makes a named pipe at path.
func Mkfifo(t testing.TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}
