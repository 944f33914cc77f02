// Package memory is the one place plugkit's commands tune the garbage
// collector for their own process (libraries never do): GCPercent and
// GCOff for a verb's run, KeepHeapFloor for a server.
package memory

import (
	"os"
	"runtime/debug"
)

// GCPercent sets the collector's target (GOGC) to percent for the rest of
// a verb, unless the environment sets GOGC, and returns what gives the
// previous setting back. Verbs whose heap is mostly short-lived (pull,
// the gateway) collect less often that way.
func GCPercent(percent int) (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	before := debug.SetGCPercent(percent)
	return func() { debug.SetGCPercent(before) }
}

// GCOff turns the collector off for the rest of a verb whose heap is
// almost all live (validate holds every file it reads), unless the
// environment sets GOGC or GOMEMLIMIT: it then collects only when the
// process's memory nears limit bytes (debug.SetMemoryLimit). It returns
// what gives the previous settings back.
func GCOff(limit int64) (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	before := debug.SetGCPercent(-1)
	beforeLimit := debug.SetMemoryLimit(limit)
	return func() {
		debug.SetMemoryLimit(beforeLimit)
		debug.SetGCPercent(before)
	}
}
