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
	ru := usage()
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Faults is the number of page faults the process has taken so far
// without reading a disk (the first touch of fresh memory): where each
// costs a trip through a hypervisor, a measure of memory's cost apart from
// the CPU's noise.
func Faults() int64 { return int64(usage().Minflt) }

func usage() syscall.Rusage {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru
}
