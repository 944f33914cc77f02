//go:build !unix

package hostile

import "time"

var started = time.Now()

// cpuTime falls back to wall time where the process's CPU time is not at
// hand.
func cpuTime() time.Duration { return time.Since(started) }

// Faults is 0 where the process's page faults are not at hand.
func Faults() int64 { return 0 }
