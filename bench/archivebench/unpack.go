package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/plugkit/plugkit/archive"
)

// measureUnpack times archive.Unpack plus archive.Digest of the archive at
// path (best and median of runs), then measures one more Unpack's memory:
// the bytes it allocates in total and the peak live heap sampled while it
// runs, both against the archive's file bytes.
func measureUnpack(path string, runs int) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var times []time.Duration
	var fileBytes int64
	var files int
	for range runs {
		start := time.Now()
		s, err := archive.Unpack(b, archive.UnpackOptions{})
		if err != nil {
			return err
		}
		_ = archive.Digest(b)
		times = append(times, time.Since(start))
		fileBytes, files = s.Size(), len(s.Files)
	}
	slices.Sort(times)

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() { // sample the live heap while Unpack runs
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			default:
			}
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	s, err := archive.Unpack(b, archive.UnpackOptions{})
	close(done)
	if err != nil {
		return err
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	heap := peak.Load() - min(peak.Load(), before.HeapAlloc)
	runtime.KeepAlive(s)
	fmt.Printf("files=%d file_bytes=%d archive_bytes=%d\n", files, fileBytes, len(b))
	fmt.Printf("unpack_digest_best_s=%.4f unpack_digest_median_s=%.4f\n", times[0].Seconds(), times[len(times)/2].Seconds())
	fmt.Printf("alloc_bytes=%d alloc_ratio=%.2f peak_heap_bytes=%d peak_heap_ratio=%.2f\n",
		alloc, float64(alloc)/float64(fileBytes), heap, float64(heap)/float64(fileBytes))
	return nil
}
