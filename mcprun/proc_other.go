//go:build !unix

package mcprun

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// setProcAttr does nothing where process groups do not exist.
func setProcAttr(cmd *exec.Cmd) {}

// signalGroup kills only the server process itself on platforms without
// process groups; any other signal is not deliverable there.
func signalGroup(pid int, sig syscall.Signal) {
	if sig != syscall.SIGKILL {
		return
	}
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// enableSubreaper is Linux only.
func enableSubreaper() error { return errors.ErrUnsupported }

// procID names a process.
type procID struct{ pid int }

func freezeEscapees(int) []procID { return nil }

func killProcs([]procID) {}

func killOrphans(func(int) bool) {}
