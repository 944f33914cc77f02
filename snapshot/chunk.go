package snapshot

// chunkSize is the memory a reader cuts small files from at once, and
// chunkLargest the largest file cut from it: a larger one has an
// allocation of its own, so that a chunk's unused end stays small.
const (
	chunkSize    = 256 << 10
	chunkLargest = chunkSize / 8
)

// bigChunkSize is the size of a reader's chunks after its first: a plugin
// with more small files than one chunk holds is a large one, whose files
// are then cut from fewer, larger allocations.
const bigChunkSize = 4 << 20

// chunk is the memory one reader reads small files into: one allocation
// serves many files, each cut to its exact size. Allocated one by one, a
// file was rounded up to the allocator's next size class once the byte
// read past its end was added, which wasted memory on every file. The
// files of a chunk stay in memory together; a snapshot holds them
// together anyway.
//
// A small file is read into scratch, which every read reuses, and copied
// into the chunk, so that the kernel writes into memory already touched
// rather than into fresh pages. The copy is a memmove of what was just
// read, small beside the system calls that read it.
type chunk struct {
	free    []byte // what is left of the chunk being cut
	scratch []byte // where small files are read first
	cut     bool   // a first chunk was cut: the next ones are big
}

// buffer returns memory to read a file of n bytes into, n counting the
// byte read past its end to see it end.
func (c *chunk) buffer(n int64) []byte {
	if n > chunkLargest+1 {
		return make([]byte, n)
	}
	if c.scratch == nil {
		c.scratch = make([]byte, chunkLargest+1)
	}
	return c.scratch[:n]
}

// keep returns the file b, read into memory from buffer, as bytes of its
// own with no capacity past them, so that growing it never reaches
// another file's: b cut to its length when it has memory of its own (a
// large file, or one that grew while read), else a copy cut from the
// chunk.
func (c *chunk) keep(b []byte) []byte {
	n := len(b)
	if n == 0 {
		return []byte{}
	}
	if c.scratch == nil || &b[0] != &c.scratch[0] {
		return b[:n:n]
	}
	if n > chunkLargest {
		return append([]byte(nil), b...)
	}
	if len(c.free) < n {
		c.free = c.next()
	}
	out := c.free[:n:n]
	c.free = c.free[n:]
	copy(out, b)
	return out
}

// next returns a new chunk to cut files from: chunkSize the first time,
// then bigChunkSize.
func (c *chunk) next() []byte {
	if !c.cut {
		c.cut = true
		return make([]byte, chunkSize)
	}
	return make([]byte, bigChunkSize)
}
