//go:build !unix

package agentplugin_test

import "testing"

func mkfifo(t *testing.T, path string) {
	t.Skip("no named pipes on this platform")
}
