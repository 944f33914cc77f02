//go:build !linux

package cli

// prefault does nothing here: see prefault_linux.go.
func prefault([]byte) {}
