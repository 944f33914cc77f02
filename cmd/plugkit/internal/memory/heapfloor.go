package memory

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// HeapFloor is the heap growth that plugkit serve lets the garbage
// collector wait for at least, when GOGC is not set. It is the command's
// choice for its own process, as GCPercent and GCOff are other verbs':
// package registry never touches the collector.
//
// A server's live heap is small (about 2 MB), and Go collects each time
// the heap doubles, so at GOGC's default of 100 a server answering
// resolves from the database collected every 850 or so requests (2.8 KB
// each, two thirds of them net/http's): 4 to 5.5 us of collector CPU per
// request on 2 loaded cores, a tenth of the request's cost. With the
// floor it collects about every 10,000 requests. A large heap (publishes
// hold their archives and files) is collected as GOGC=100 would, at twice
// what is live, so the floor adds about HeapFloor bytes to the heap at
// most, whatever the load.
//
// A GOGC or GOMEMLIMIT in the environment still rules: with GOGC set, the
// floor is not kept, and GOMEMLIMIT lowers every goal.
const HeapFloor = 32 << 20

// heapFloorOnce starts the floor once per process: the collector is the
// process's, not a server's.
var heapFloorOnce sync.Once

// KeepHeapFloor keeps HeapFloor for the rest of the process, unless the
// environment sets GOGC. plugkit serve calls it before serving.
func KeepHeapFloor() {
	heapFloorOnce.Do(func() {
		if _, set := os.LookupEnv("GOGC"); !set {
			startHeapFloor(HeapFloor)
		}
	})
}

// heapFloor sets the collector's percent after each collection, so that
// the next goal is max(2 x live, live + floor): debug.SetGCPercent scales
// with the live heap, which a fixed percent high enough for a small heap
// would multiply by as much when publishes make it large.
type heapFloor struct {
	floor uint64
	// before is the percent in force when the floor started, given back
	// by stop.
	before int

	mu sync.Mutex // serializes adjust and stop
	// set is the percent this floor set last. When another is in force,
	// someone else chose it (a test measuring heap peaks sets 10), and the
	// floor leaves it alone until it is back.
	set     int
	stopped bool
}

// The runtime/metrics the floor reads.
const (
	liveHeapMetric  = "/gc/heap/live:bytes"
	gcPercentMetric = "/gc/gogc:percent"
)

// minLiveHeap is the least live heap the percent is computed from: the
// runtime's heap minimum, 4 MiB at GOGC=100, below which it never sets a
// goal, and which it scales by the percent too. Computed from a smaller
// live heap (none is reported before the first collection), the percent
// would scale that minimum past live + floor.
const minLiveHeap = 4 << 20

// startHeapFloor keeps floor until stop is called; stop gives back the
// percent in force before, unless another was set meanwhile.
func startHeapFloor(floor uint64) (stop func()) {
	f := &heapFloor{floor: floor}
	f.before = gcPercent()
	f.set = f.before
	f.adjust()
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.stopped = true
		if gcPercent() == f.set {
			debug.SetGCPercent(f.before)
		}
	}
}

// floorPercent is the percent that makes the goal of a live heap
// max(2 x live, live + floor).
func floorPercent(live, floor uint64) int {
	live = max(live, minLiveHeap)
	return int(max(100, (floor*100+live-1)/live))
}

// gcPercent is the collector's percent in force.
func gcPercent() int {
	s := []metrics.Sample{{Name: gcPercentMetric}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// adjust sets the percent for the live heap of the last collection and
// runs again after the next one.
func (f *heapFloor) adjust() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return
	}
	s := []metrics.Sample{{Name: liveHeapMetric}, {Name: gcPercentMetric}}
	metrics.Read(s)
	if int(s[1].Value.Uint64()) == f.set {
		p := floorPercent(s[0].Value.Uint64(), f.floor)
		// The swap tells whether another setting came in since the read.
		if old := debug.SetGCPercent(p); old != f.set {
			debug.SetGCPercent(old)
		} else {
			f.set = p
		}
	}
	// A cleanup runs after the collection that frees its object. The
	// object holds a pointer so that the tiny allocator, whose blocks may
	// outlive it, does not take it.
	type sentinel struct {
		_ *int
		_ [16]byte
	}
	runtime.AddCleanup(new(sentinel), (*heapFloor).adjust, f)
}
