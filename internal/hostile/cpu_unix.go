//go:build unix

package hostile

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) the process has used: on a
// loaded machine it grows with the work done, where wall time also counts
// the waits for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
