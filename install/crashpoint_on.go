//go:build plugkit_crashpoints && unix

package install

import (
	"os"
	"syscall"
)

// crashPoint kills the process with SIGKILL when PLUGKIT_CRASH_AT names
// this point, so that the crash tests can stop a real binary at every
// moment of a write. Only test builds (-tags plugkit_crashpoints) have it.
func crashPoint(name string) {
	if os.Getenv("PLUGKIT_CRASH_AT") == name {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
}
