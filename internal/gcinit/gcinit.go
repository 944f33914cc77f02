// Package gcinit keeps the garbage collector off while the package
// initialisers of a command run, and gives it back when main starts.
//
// plugkit links some 320 packages whose initialisers allocate about 3.5 MB
// (compiled regular expressions, protobuf descriptors, metric registries),
// which crosses the collector's first 4 MB goal: its mark phase then ran
// beside the initialisers, which kept allocating under write barriers and
// assists. Held off, the same collection comes once main starts and finds
// 1 MB live of 4 MB; `plugkit version` takes 10-20% less CPU
// (medians of perf stat runs alternating with a build without this
// package). Package initialisers run in import-path order once their own
// imports are done, and this one imports only runtime/debug, so it runs
// before most of the heavy ones; wherever it runs, what it does is undone
// by Restore.
//
// Only a main package imports it, and its main calls Restore first.
package gcinit

import "runtime/debug"

// percent is the collector's setting before init turned it off: GOGC's,
// or 100.
var percent = debug.SetGCPercent(-1)

// Restore gives the collector back its setting. main calls it first.
func Restore() { debug.SetGCPercent(percent) }
