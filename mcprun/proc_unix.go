//go:build unix

package mcprun

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the server in a new process group whose id is its
// pid, so that killing the group reaches every child it forks.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup sends SIGKILL to every process in the group led by pid.
func killProcessGroup(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if err == syscall.ESRCH {
		return nil // the group is already gone
	}
	return err
}
