package pages

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// HugeSize is the size of a transparent huge page when the kernel gives
// them only to memory that asks, else 0 (and Huge does nothing).
var HugeSize = sync.OnceValue(func() uintptr {
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
	if err != nil || n == 0 || n&(n-1) != 0 {
		return 0
	}
	return uintptr(n)
})

// Huge asks for huge pages for the whole huge pages b spans. It pays only
// for memory not touched yet: pages already faulted in stay as they are.
func Huge(b []byte) {
	if size := HugeSize(); size != 0 {
		advise(b, size, unix.MADV_HUGEPAGE)
	}
}

// Populate maps in the whole pages of b's capacity at once, before they
// are first written: for a buffer about to be written to its end. A
// kernel before 5.14 ignores it.
func Populate(b []byte) {
	advise(b[:cap(b)], uintptr(os.Getpagesize()), unix.MADV_POPULATE_WRITE)
}

// advise gives advice for the whole units of size (a power of two) that
// b spans, if any.
func advise(b []byte, size uintptr, advice int) {
	if len(b) == 0 {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	beg := (p+size-1)&^(size-1) - p
	end := (p+uintptr(len(b)))&^(size-1) - p
	if beg < end && end <= uintptr(len(b)) {
		// Best effort: a refusal leaves the pages to fault in as before.
		_ = unix.Madvise(b[beg:end], advice)
	}
}
