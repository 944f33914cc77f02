//go:build !linux

package pages

// HugeSize is 0: transparent huge pages are Linux's.
func HugeSize() uintptr { return 0 }

// Huge does nothing: transparent huge pages are Linux's.
func Huge([]byte) {}

// Populate does nothing: madvise(MADV_POPULATE_WRITE) is Linux's.
func Populate([]byte) {}
