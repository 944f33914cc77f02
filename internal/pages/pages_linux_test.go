package pages_test

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/plugkit/plugkit/internal/hostile"
	"github.com/plugkit/plugkit/internal/pages"
)

// touch maps n bytes of fresh memory, gives it to hint, writes a byte of
// each page and returns the page faults that took.
func touch(t *testing.T, n int, hint func([]byte)) int64 {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(b)
	hint(b)
	before := hostile.Faults()
	for i := 0; i < n; i += 4096 {
		b[i] = 1
	}
	return hostile.Faults() - before
}

// TestHintsSaveFaults: memory given Huge is faulted in a huge page at a
// time (but for the ends of the range that are not whole huge pages), and
// memory given Populate is already mapped in when it is written. The
// race detector's shadow memory faults as often with a hint as without:
// the difference is the memory's own pages.
func TestHintsSaveFaults(t *testing.T) {
	const n = 16 << 20
	plain := touch(t, n, func([]byte) {})
	for name, c := range map[string]struct {
		hint  func([]byte)
		works bool
		why   string
	}{
		"Huge":     {pages.Huge, pages.HugeSize() != 0, "this kernel's transparent huge pages are not in madvise mode: Huge does nothing"},
		"Populate": {pages.Populate, populates(), "this kernel has no MADV_POPULATE_WRITE (Linux 5.14): Populate does nothing"},
	} {
		t.Run(name, func(t *testing.T) {
			if !c.works {
				t.Skip(c.why)
			}
			hinted := touch(t, n, c.hint)
			t.Logf("page faults writing %d MiB: %d plain, %d after %s", n>>20, plain, hinted, name)
			if saved := plain - hinted; saved < n/4096/2 {
				t.Errorf("%s saved %d of %d page faults, want at least half", name, saved, plain)
			}
		})
	}
}

// populates reports whether the kernel takes MADV_POPULATE_WRITE.
func populates() bool {
	b, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return false
	}
	defer unix.Munmap(b)
	return unix.Madvise(b, unix.MADV_POPULATE_WRITE) == nil
}
