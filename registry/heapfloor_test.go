package registry

import (
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
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

// servedGCPercent reads go_gc_gogc_percent from a server's /metrics.
func servedGCPercent(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url + metricsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(line, "go_gc_gogc_percent "); ok {
			p, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("go_gc_gogc_percent %q", v)
			}
			return p
		}
	}
	t.Fatalf("no go_gc_gogc_percent in /metrics:\n%s", body)
	return 0
}

// TestE2EServeKeepsHeapFloor: plugkit serve keeps the floor when GOGC is
// not set, and leaves an operator's GOGC alone.
func TestE2EServeKeepsHeapFloor(t *testing.T) {
	t.Setenv("GOGC", "") // restored after the test
	os.Unsetenv("GOGC")
	srv := startServe(t, t.TempDir())
	// internal/gcinit runs at 200 until the first collection; the floor
	// of a new server's small heap is higher.
	if p := servedGCPercent(t, srv.url); p <= 200 {
		t.Errorf("without GOGC: GC percent %d, want the floor's (over 200 for a small heap)", p)
	}
	srv = startServeEnv(t, t.TempDir(), []string{"GOGC=150"})
	// 300 until the first collection: internal/gcinit doubles the
	// setting until then.
	if p := servedGCPercent(t, srv.url); p != 150 && p != 300 {
		t.Errorf("with GOGC=150: GC percent %d", p)
	}
}
