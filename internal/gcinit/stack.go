package gcinit

// stackReserve is the size of the frame growStack puts on the stack of the
// goroutine that runs the package initialisers: the largest that the
// compiler keeps on the stack (a larger variable moves to the heap).
const stackReserve = 128 << 10

// init runs before the initialisers of oras-go, which follow this package
// in import-path order.
func init() { growStack() }

// growStack grows the stack of the goroutine running the package
// initialisers to 256 KB in one step, while it is shallow. oras-go's
// registry package compiles a regular expression whose compiler recurses
// deeply enough to take that stack from 8 KB to 256 KB one doubling at a
// time, each copying and re-walking thousands of frames into fresh pages:
// 5-7% of the CPU and some 100 of the 650 page faults of plugkit version.
// The frame's pages would be touched by that recursion anyway; nothing
// shrinks the stack before the first collection, which Restore holds off
// until main.
//
//go:noinline
func growStack() {
	var frame [stackReserve]byte
	touch(frame[:])
}

// touch keeps frame on the stack: it reads it, so it must exist, and does
// not keep it, so it need not move to the heap.
//
//go:noinline
func touch(frame []byte) bool { return frame[len(frame)-1] == 0 }
