package hostile

import (
	"fmt"
	"math"
	"runtime"
	"time"
)

// Cost is what one run of a function costs, in measures that another
// process's load changes little or not at all: the heap allocations and
// bytes a run makes are about the same on an idle machine and a busy one,
// and the least CPU time of several runs is the run disturbed least.
type Cost struct {
	CPU    time.Duration
	Allocs uint64 // heap objects allocated
	Bytes  uint64 // heap bytes allocated
}

// slack is how many times more than linear Linear lets each measure grow.
// CPU time needs it for the caches and TLB a large input outgrows and for
// what a loaded machine still adds to the least of a few runs;
// allocations, for what a slice or a map that grows by doubling wastes at
// one size and not at the other, and for a sync.Pool's buffer that a
// collection at the wrong moment drops, so that a run grows it again. A
// quadratic step grows by the square of the size's factor, far past it.
const slack = 3

// linearRounds is the number of times Linear measures each size.
const linearRounds = 3

// minBatch is the least CPU time one measure spends: the process's CPU
// time counts its other threads (the collector's) only as of their last
// scheduler tick, an error that a shorter measure would be mostly made of.
const minBatch = 20 * time.Millisecond

// Linear measures small and large, where large does growth times the work
// of small, and fails t unless each measure of large is at most slack
// times growth times that of small. It returns small's cost per run and
// large's.
//
// The two are measured in turns, so that both meet the same stretch of the
// machine's load, and small runs round(growth) times in a row for each
// measure (its cost is the batch's divided by the runs), so that each
// measure of either lasts about as long: the least of several short runs
// would otherwise find a quiet moment the long run never has, and the
// ratio would grow with the load. A measure repeats its function until it
// has spent minBatch. It starts with a run it does not count, so that what
// a first run fills once (a sync.Pool's buffers, grown to the size) is not
// charged to a large run done once and spread over a batch of small ones,
// then with a collection, so that it pays for none of the garbage left
// before it.
func Linear(t T, what string, growth float64, small, large func()) (s, l Cost) {
	t.Helper()
	batch := max(1, int(math.Round(growth)))
	for i := range linearRounds {
		cs := measure(batch, small)
		cl := measure(1, large)
		if i == 0 {
			s, l = cs, cl
		}
		s, l = s.least(cs), l.least(cl)
	}
	t.Logf("%s: small %s, large %s (growth %.0f)", what, s, l, growth)
	check := func(measure string, a, b float64) {
		if ratio := b / max(a, 1); ratio > slack*growth {
			t.Errorf("%s: %s grew %.1f times for %.0f times the work (at most %.0f for a linear cost): not linear", what, measure, ratio, growth, slack*growth)
		}
	}
	check("CPU time", float64(s.CPU), float64(l.CPU))
	check("allocations", float64(s.Allocs), float64(l.Allocs))
	check("bytes allocated", float64(s.Bytes), float64(l.Bytes))
	return s, l
}

// T is what Linear needs of a *testing.T (this package is linked into
// benchmark programs too, which have no testing.T).
type T interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
}

// measure runs f once, collects, then runs f at least runs times in a row
// and until they have spent minBatch, and returns the cost of one of
// those runs: the batch's divided by the runs.
func measure(runs int, f func()) Cost {
	var before, after runtime.MemStats
	f()
	runtime.GC()
	runtime.ReadMemStats(&before) // exact: it flushes every P's counts
	n, start := 0, cpuTime()
	for ; n < runs || cpuTime()-start < minBatch; n++ {
		f()
	}
	cpu := cpuTime() - start
	runtime.ReadMemStats(&after)
	return Cost{CPU: cpu / time.Duration(n), Allocs: (after.Mallocs - before.Mallocs) / uint64(n), Bytes: (after.TotalAlloc - before.TotalAlloc) / uint64(n)}
}

// least is the least of c and d, measure by measure.
func (c Cost) least(d Cost) Cost {
	return Cost{CPU: min(c.CPU, d.CPU), Allocs: min(c.Allocs, d.Allocs), Bytes: min(c.Bytes, d.Bytes)}
}

// String gives the three measures, for a test's log.
func (c Cost) String() string {
	return fmt.Sprintf("CPU %v, %d allocations, %d KiB", c.CPU, c.Allocs, c.Bytes>>10)
}
