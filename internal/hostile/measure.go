package hostile

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// Time runs f and returns its wall time and the process's CPU time (user
// and system) during it. On a loaded machine the CPU time is the steadier
// measure of the work done: wall time also counts the waits for a core.
func Time(f func()) (wall, cpu time.Duration) {
	start, c := time.Now(), cpuTime()
	f()
	return time.Since(start), cpuTime() - c
}

// LeastCPU runs f runs times and returns the least CPU time a run took:
// the least is the run other processes disturbed least.
func LeastCPU(runs int, f func()) time.Duration {
	var least time.Duration
	for i := range runs {
		if _, c := Time(f); i == 0 || c < least {
			least = c
		}
	}
	return least
}

const (
	heapObjects = "/memory/classes/heap/objects:bytes"
	heapAllocs  = "/gc/heap/allocs:bytes"
	heapLive    = "/gc/heap/live:bytes"
)

// Heap runs f and returns the most heap it held at once above what was in
// use before, and every heap byte it allocated. The peak is sampled from
// runtime/metrics while f runs with the collector made eager (GOGC=10), so
// that it approaches the live peak rather than the garbage the default
// pacing lets pile up; f therefore runs slower than usual. It is not safe
// to run two Heaps at once: the heap is the process's.
func Heap(f func()) (peak, allocated uint64) {
	samples := []metrics.Sample{{Name: heapObjects}, {Name: heapAllocs}}
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	metrics.Read(samples)
	base, allocs := samples[0].Value.Uint64(), samples[1].Value.Uint64()

	var top atomic.Uint64
	observe := func(s []metrics.Sample) {
		metrics.Read(s[:1])
		if v := s[0].Value.Uint64(); v > top.Load() {
			top.Store(v)
		}
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: heapObjects}}
		for {
			observe(s)
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	f()
	close(stop)
	<-done
	observe(samples)
	metrics.Read(samples[1:])
	return top.Load() - min(base, top.Load()), samples[1].Value.Uint64() - allocs
}

// LivePeak runs f and returns the most heap that live objects held at the
// moments f marks by calling sample, above what was live before f. Each
// sample forces a collection and reads what it marked, so the figure is
// what the code under test holds there, whatever the collector's pacing
// and the machine's load: never garbage a collection has not yet freed,
// which Heap counts. f calls sample where that code holds the most (in a
// callback it gives each step's result to, say). It is not safe to run two
// LivePeaks at once: the heap is the process's.
func LivePeak(f func(sample func())) uint64 {
	// Two collections: the second empties what sync.Pools kept through
	// the first, so that buffers f takes from a pool count as f's.
	runtime.GC()
	base := live()
	var peak uint64
	f(func() { peak = max(peak, live()) })
	return peak - min(base, peak)
}

// live collects and returns the heap bytes the collection found live.
func live() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: heapLive}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
