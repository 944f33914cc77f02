package memory

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// These tests change the collector of the whole test process; none of
// them is parallel, and each gives back the percent it found.

// collectUntil runs a collection and waits until the percent in force is want,
// which the floor sets from a cleanup after the collection; it fails the
// test if it never is.
func collectUntil(t *testing.T, want func() int) {
	t.Helper()
	runtime.GC()
	deadline := time.Now().Add(10 * time.Second)
	for gcPercent() != want() {
		if time.Now().After(deadline) {
			t.Fatalf("GC percent %d, want %d", gcPercent(), want())
		}
		time.Sleep(time.Millisecond)
	}
}

func liveHeap() uint64 {
	s := []metrics.Sample{{Name: liveHeapMetric}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func TestFloorPercent(t *testing.T) {
	const floor = 32 << 20
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 800}, // before the first collection: the runtime's 4 MiB minimum
		{1 << 20, 800},
		{4 << 20, 800},
		{3 << 20 * 2, 534}, // rounded up
		{16 << 20, 200},
		{32 << 20, 100},
		{1 << 30, 100}, // a large heap is collected at GOGC=100's goal
	} {
		if got := floorPercent(c.live, floor); got != c.want {
			t.Errorf("floorPercent(%d, %d) = %d, want %d", c.live, floor, got, c.want)
		}
	}
}

// TestHeapFloorRaisesTheGoalOfASmallHeap: with a floor, the goal after a
// collection is the live heap plus the floor, not twice the live heap.
func TestHeapFloorRaisesTheGoalOfASmallHeap(t *testing.T) {
	before := gcPercent()
	const floor = 64 << 20 // above the test process's live heap
	stop := startHeapFloor(floor)
	collectUntil(t, func() int { return floorPercent(liveHeap(), floor) })
	if p := gcPercent(); p <= 100 {
		t.Fatalf("GC percent %d with a live heap of %d bytes", p, liveHeap())
	}
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	if goal, live := s[0].Value.Uint64(), liveHeap(); goal < live+floor*9/10 {
		t.Errorf("heap goal %d bytes for %d live: the floor of %d is not kept", goal, live, floor)
	}
	stop()
	if p := gcPercent(); p != before {
		t.Errorf("stop left GC percent %d, want %d", p, before)
	}
}

// TestHeapFloorLeavesALargeHeapAtTwiceLive: once the live heap is over the
// floor, the collector runs at GOGC=100's goal, so that the floor adds at
// most its own size to a large heap (publishes hold their archives).
func TestHeapFloorLeavesALargeHeapAtTwiceLive(t *testing.T) {
	before := gcPercent()
	const floor = 4 << 20
	stop := startHeapFloor(floor)
	defer stop()
	held := make([]byte, 3*floor)
	for i := range held {
		held[i] = byte(i) // touched, so that it is real memory
	}
	collectUntil(t, func() int { return 100 })
	runtime.KeepAlive(held)
	stop()
	if p := gcPercent(); p != before {
		t.Errorf("stop left GC percent %d, want %d", p, before)
	}
}

// TestHeapFloorStepsAsideForAnotherSetting: a percent set by someone else
// (hostile.Heap sets 10 to measure peaks) stays in force across
// collections; the floor takes over again once its own is back.
func TestHeapFloorStepsAsideForAnotherSetting(t *testing.T) {
	const floor = 16 << 20
	stop := startHeapFloor(floor)
	defer stop()
	collectUntil(t, func() int { return floorPercent(liveHeap(), floor) })
	if liveHeap() >= floor {
		t.Fatalf("the test process holds %d bytes, over the floor of %d: the test cannot tell the floor's percent from GOGC's", liveHeap(), floor)
	}
	ours := debug.SetGCPercent(10)
	for range 3 {
		collectUntil(t, func() int { return 10 })
		time.Sleep(10 * time.Millisecond) // time for a cleanup to run
		if p := gcPercent(); p != 10 {
			t.Fatalf("GC percent %d after a collection, want the 10 set meanwhile", p)
		}
	}
	// Back to the floor's percent, with a live heap over the floor: the
	// floor adjusts again, to 100.
	held := make([]byte, 2*floor)
	for i := range held {
		held[i] = byte(i)
	}
	debug.SetGCPercent(ours)
	collectUntil(t, func() int { return 100 })
	runtime.KeepAlive(held)
}
