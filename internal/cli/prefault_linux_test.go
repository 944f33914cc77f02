//go:build !race

// The race detector shadows every write with writes of its own, which
// fault in pages of their own: the faults counted here would be its.

package cli

import (
	"runtime"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPrefaultMapsPagesIn: after prefault, writing a fresh buffer to its
// end takes (almost) no page faults, where it took one a page; and its
// content is kept.
func TestPrefaultMapsPagesIn(t *testing.T) {
	probe, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	err = unix.Madvise(probe, unix.MADV_POPULATE_WRITE)
	unix.Munmap(probe)
	if err != nil {
		t.Skipf("this kernel has no MADV_POPULATE_WRITE: %v", err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	faults := func() int64 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
			t.Fatal(err)
		}
		return ru.Minflt
	}
	const size = 4 << 20 // 1,024 pages: a fresh span of its own
	for _, pre := range []bool{false, true} {
		b := make([]byte, 0, size)
		if pre {
			prefault(b)
		}
		before := faults()
		b = b[:size]
		for i := 0; i < size; i += 4096 {
			b[i] = 1
		}
		n := faults() - before
		if pre && n > 64 {
			t.Errorf("writing 1,024 pages after prefault: %d page faults", n)
		}
		if !pre && n < 512 {
			t.Skipf("writing 1,024 fresh pages took %d page faults: the heap gave used pages; nothing to measure", n)
		}
	}
}
