//go:build !unix

package hostile

import "time"

var started = time.Now()

// cpuTime falls back to wall time where the process's CPU time is not at
// hand.
func cpuTime() time.Duration { return time.Since(started) }
