package snapshot

// chunkSize is the memory a reader cuts small files from at once, and
// chunkLargest the largest file cut from it: a larger one has an
// allocation of its own, so that a chunk's unused end stays small.
const (
	chunkSize    = 256 << 10
	chunkLargest = chunkSize / 8
)

// chunk is the memory one reader reads small files into: one allocation
// serves many files, each cut to its exact size. Allocated one by one, a
// file was rounded up to the allocator's next size class once the byte
// read past its end was added (a 4,210-byte SKILL.md took 4,864 bytes):
// 15% of the memory a plugin of 5,000 skills holds, and every page of it
// one more page fault. The files of a chunk stay in memory together; a
// snapshot holds them together anyway.
type chunk struct{ free []byte }

// take returns n bytes to read a file into, with no capacity past them,
// so that growing it never reaches another file's bytes.
func (c *chunk) take(n int64) []byte {
	if n > chunkLargest {
		return make([]byte, n)
	}
	if int64(len(c.free)) < n {
		c.free = make([]byte, chunkSize)
	}
	return c.free[:n:n]
}

// keep marks b, what was read into the last take cut to its length, as
// used; the rest of that take is cut from again. A b of its own memory
// (a large file, or one that grew while read) leaves the chunk as it is.
func (c *chunk) keep(b []byte) {
	if len(b) > 0 && len(c.free) >= len(b) && &c.free[0] == &b[0] {
		c.free = c.free[len(b):]
	}
}
