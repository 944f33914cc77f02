package gcinit

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugeHeapBytes is the heap askHugePages asks to be backed by
// transparent huge pages: more than validating 5,000 skills allocates.
const hugeHeapBytes = 64 << 20

// askHugePages asks the kernel to back the next hugeHeapBytes of heap
// with transparent huge pages, where it gives them only to memory that
// asks (the "madvise" mode).
//
// The runtime never asks, and on a virtual machine every page fault goes
// through the hypervisor: 13-15 µs each on the one issue 15 was measured
// on, where validating 5,000 skills took 8,800 faults, a third of its CPU
// time, most of them the first touch of fresh heap. A huge page is one
// fault for 512 pages.
//
// The runtime maps memory with the flags it chooses (a mapping made
// earlier would be replaced), so the memory is first allocated, which
// maps it, then advised, then freed by a collection: the heap grows into
// it next, as the page allocator takes the lowest free addresses first.
// That collection and the mapping cost some 5-10 ms here, which only a
// process that allocates much more earns back; so it is done once the
// first collection has run (see Restore), never for a short verb.
//
// A kernel without transparent huge pages, or one that gives them to all
// memory anyway ("always"), is left alone.
func askHugePages() {
	size := hugePageSize()
	if size == 0 {
		return
	}
	b := make([]byte, hugeHeapBytes)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	beg := (p+size-1)&^(size-1) - p
	end := (p+hugeHeapBytes)&^(size-1) - p
	if beg < end {
		// Best effort: a refusal leaves ordinary pages, as before.
		_ = unix.Madvise(b[beg:end], unix.MADV_HUGEPAGE)
	}
	b = nil
	runtime.GC()
}

// hugePageSize is the size of a transparent huge page when the kernel
// gives them only to memory that asks, else 0.
func hugePageSize() uintptr {
	const thp = "/sys/kernel/mm/transparent_hugepage/"
	mode, err := os.ReadFile(thp + "enabled")
	if err != nil || !bytes.Contains(mode, []byte("[madvise]")) {
		return 0
	}
	b, err := os.ReadFile(thp + "hpage_pmd_size")
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil || n == 0 || n&(n-1) != 0 || n > hugeHeapBytes/2 {
		return 0
	}
	return uintptr(n)
}
