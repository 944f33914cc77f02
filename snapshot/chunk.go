package snapshot

// chunkSize is the memory a reader cuts small files from at once, and
// chunkLargest the largest file cut from it: a larger one has an
// allocation of its own, so that a chunk's unused end stays small.
const (
	chunkSize    = 256 << 10
	chunkLargest = chunkSize / 8
)

// bigChunkSize is the size of a reader's chunks after its first: a plugin
// with more small files than one chunk holds is a large one, and a chunk
// this size spans at least one whole huge page, which its reader asks the
// kernel for (package pages). Reading 5,000 SKILL.md files, the first
// touch of the memory they were copied into was half the page faults left
// (1,840 of 3,521), each 13-15 µs on the machine of issue 15.
const bigChunkSize = 4 << 20

// chunk is the memory one reader reads small files into: one allocation
// serves many files, each cut to its exact size. Allocated one by one, a
// file was rounded up to the allocator's next size class once the byte
// read past its end was added (a 4,210-byte SKILL.md took 4,864 bytes):
// 15% of the memory a plugin of 5,000 skills holds, and every page of it
// one more page fault. The files of a chunk stay in memory together; a
// snapshot holds them together anyway.
//
// A small file is read into scratch, which every read reuses, and copied
// into the chunk: on the virtual machine issue 15 was measured on, the
// program's first read of fresh memory the kernel had just read a file
// into stalled (skill.Parse's first look at each SKILL.md was 8% of the
// CPU samples of validating 5,000 skills), and reading 5,000 SKILL.md
// files into fresh memory took 25% more CPU than reading them into one
// buffer and copying them out. The copy itself is a memmove of what was
// just read, small beside the system calls that read it.
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
