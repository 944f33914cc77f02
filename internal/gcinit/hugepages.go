package gcinit

import (
	"runtime"

	"github.com/plugkit/plugkit/internal/pages"
)

// hugeHeapBytes is the heap askHugePages asks to be backed by
// transparent huge pages: more than validating 5,000 skills allocates.
const hugeHeapBytes = 64 << 20

// askHugePages asks the kernel to back the next hugeHeapBytes of heap
// with transparent huge pages (see package pages).
//
// The runtime maps memory with the flags it chooses (a mapping made
// earlier would be replaced), so the memory is first allocated, which
// maps it, then advised, then freed by a collection: the heap grows into
// it next, as the page allocator takes the lowest free addresses first.
// That collection and the mapping cost some 5-10 ms on the machine of
// issue 15, which only a process that allocates much more earns back; so
// it is done once the first collection has run (see Restore), never for a
// short verb.
func askHugePages() {
	if pages.HugeSize() == 0 {
		return
	}
	b := make([]byte, hugeHeapBytes)
	pages.Huge(b)
	b = nil
	runtime.GC()
}
