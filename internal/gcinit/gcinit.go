// Package gcinit keeps the garbage collector off while the package
// initialisers of a command run, and gives it back when main starts.
//
// plugkit links some 320 packages whose initialisers allocate about 3.5 MB
// (compiled regular expressions, protobuf descriptors, metric registries),
// which crosses the collector's first 4 MB goal: its mark phase then ran
// beside the initialisers, which kept allocating under write barriers and
// assists. Held off, the same collection came once main started and found
// 1 MB live of 4 MB; `plugkit version` took 10-20% less CPU (medians of
// perf stat runs alternating with a build without this package).
//
// Restore also moves that first collection from 4 MB to 8 MB of heap (twice
// the first goal of the user's GOGC), and gives GOGC back unchanged once it
// has run: a short verb (version, unpack of a typical plugin) then ends
// before any collection, and a long one collects as before, 4 MB later
// once.
//
// Package initialisers run in import-path order once their own imports are
// done, and this one imports only runtime and runtime/debug, so it runs
// before most of the heavy ones; wherever it runs, what it does is undone
// by Restore and the first collection.
//
// Only a main package imports it, and its main calls Restore first.
package gcinit

import (
	"runtime"
	"runtime/debug"
)

// percent is the collector's setting before init turned it off: GOGC's,
// or 100.
var percent = debug.SetGCPercent(-1)

// Restore turns the collector back on. Until the first collection it runs
// at twice the user's setting; the collection gives it back (see
// giveBack), unless a verb has chosen its own setting meanwhile
// (the gateway does), which then stays.
func Restore() {
	if percent <= 0 {
		debug.SetGCPercent(percent)
		return
	}
	debug.SetGCPercent(2 * percent)
	// A cleanup on an object nothing refers to runs after the cycle that
	// frees it. The object holds a pointer so that the tiny allocator,
	// whose blocks may outlive it, does not take it.
	type sentinel struct {
		_ *int
		_ [16]byte
	}
	runtime.AddCleanup(new(sentinel), func(struct{}) { giveBack() }, struct{}{})
}

// giveBack sets the user's setting again, unless the one in force is no
// longer Restore's.
func giveBack() {
	if p := debug.SetGCPercent(percent); p != 2*percent {
		debug.SetGCPercent(p)
	}
}
