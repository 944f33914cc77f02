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
// registry package compiles the regular expression of a tag,
// `^[\w][\w.-]{0,127}$`, whose repetition the compiler recurses into 127
// deep: enough to take that stack from 8 KB to 256 KB one doubling at a
// time, each copying and re-walking thousands of frames into fresh pages,
// a tenth of the instructions of plugkit version (valgrind: 5.23 -> 4.71
// million) and some 20 page faults. The frame's pages would be touched by
// that recursion anyway; nothing shrinks the stack before the first
// collection, which Restore holds off until main.
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
