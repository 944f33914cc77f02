//go:build unix

package main

import "syscall"

// newSession puts the sleeper in a session of its own, outside the process
// group that mcprun stops, so the tests can tell what a group kill reaches.
func newSession() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
