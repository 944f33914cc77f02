//go:build !unix

package testtree

import "testing"

// Mkfifo skips the test: there are no named pipes on this platform.
func Mkfifo(t testing.TB, path string) {
	t.Skip("no named pipes on this platform")
}
