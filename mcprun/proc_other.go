//go:build !unix

package mcprun

import (
	"os"
	"os/exec"
)

// setProcessGroup is a no-op where process groups do not exist.
func setProcessGroup(cmd *exec.Cmd) {}

// killProcessGroup kills only the server process itself on platforms
// without process groups.
func killProcessGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	p.Kill()
	return nil
}
