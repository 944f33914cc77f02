//go:build !unix

package snapshot_test

import "testing"

func mkfifo(t *testing.T, path string) {
	t.Skip("no named pipes on this platform")
}
