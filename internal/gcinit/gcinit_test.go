package gcinit

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestRestore: the collector is off from this package's initialisation
// until Restore, runs at twice the setting it had (GOGC's) until the first
// collection, and has that setting back after it.
//
// It runs once per process (go test -count=1): Restore acts on the state
// this package's initialisation left.
func TestRestore(t *testing.T) {
	if percent <= 0 {
		t.Skipf("GOGC=%d: run the test with the collector on", percent)
	}
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("before Restore the collector is at %d%%, want off", got)
	}
	Restore()
	if got := debug.SetGCPercent(2 * percent); got != 2*percent {
		t.Fatalf("after Restore the collector is at %d%%, want %d%% until the first collection", got, 2*percent)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		runtime.GC()
		got := debug.SetGCPercent(percent)
		if got == percent {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after collections the collector is at %d%%, want %d%% back", got, percent)
		}
		debug.SetGCPercent(got)
		time.Sleep(10 * time.Millisecond)
	}
}

// TestGiveBackKeepsAVerbsSetting: a setting chosen after Restore and
// before the first collection (the gateway's) is not undone by it.
func TestGiveBackKeepsAVerbsSetting(t *testing.T) {
	if percent <= 0 {
		t.Skipf("GOGC=%d: run the test with the collector on", percent)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(percent))
	debug.SetGCPercent(2 * percent)
	giveBack()
	if got := debug.SetGCPercent(7 * percent); got != percent {
		t.Fatalf("Restore's setting was given back as %d%%, want %d%%", got, percent)
	}
	giveBack()
	if got := debug.SetGCPercent(percent); got != 7*percent {
		t.Fatalf("a verb's setting of %d%% became %d%%", 7*percent, got)
	}
}

// TestGrowStackStaysOnTheStack: growStack's frame is a stack variable; one
// larger than the compiler keeps on the stack would be allocated on the
// heap, and grow nothing.
func TestGrowStackStaysOnTheStack(t *testing.T) {
	if allocs := testing.AllocsPerRun(10, growStack); allocs != 0 {
		t.Fatalf("growStack allocated %v times a run, want its frame on the stack", allocs)
	}
}
