//go:build !unix

package main

import "syscall"

// newSession returns no attributes where there are no sessions (Windows):
// the tests that spawn a session leader run only on Linux.
func newSession() *syscall.SysProcAttr { return nil }
