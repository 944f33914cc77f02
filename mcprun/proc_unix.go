//go:build unix && !linux

package mcprun

import (
	"errors"
	"os/exec"
	"syscall"
)

// setProcAttr puts the server in a new process group whose id is its pid,
// so that killing the group reaches every child it forks. This system has
// no parent-death signal: a plugkit killed with SIGKILL leaves the server
// to notice its closed stdin.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to every process in the group led by pid.
func signalGroup(pid int, sig syscall.Signal) {
	syscall.Kill(-pid, sig)
}

// enableSubreaper is Linux only.
func enableSubreaper() error { return errors.ErrUnsupported }

// procID names a process; without /proc only the group is known here.
type procID struct{ pid int }

// freezeEscapees finds nothing: without /proc, descendants that left the
// group cannot be listed.
func freezeEscapees(int) []procID { return nil }

func killProcs([]procID) {}

func killOrphans(func(int) bool) {}
