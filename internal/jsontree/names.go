package jsontree

import (
	"bytes"
	"hash/maphash"
	"slices"
)

// smallObject is the number of member names compared one by one as they
// come: most objects are smaller. Past it, names are checked when the
// object ends (or the parse fails inside it), by sorting their hashes,
// which reads memory in order and stays linear in the object's size.
const smallObject = 16

// nameSet finds repeated member names in one object.
type nameSet struct {
	few []uint32 // the first names, compared one by one
	// hashed holds, for each later name, the high 32 bits of its hash
	// above its node index, appended in source order.
	hashed []uint64
	depth  int // length of the parser's path at the object
	seed   maphash.Seed
	tmp    []uint64
	a, b   []byte // scratch for decoding escaped names
}

// reset empties the set for a new object whose path has depth steps. A
// large buffer is dropped rather than kept, so that many small objects
// after a large one do not each hold its size.
func (s *nameSet) reset(depth int) {
	s.few, s.hashed, s.depth = s.few[:0], s.hashed[:0], depth
	s.drop(1 << 16)
}

// drop lets go of the buffers that hold more than limit names, or
// scratch of more than limit bytes.
func (s *nameSet) drop(limit int) {
	if cap(s.hashed) > limit {
		s.hashed, s.tmp = nil, nil
	}
	if cap(s.a) > limit || cap(s.b) > limit {
		s.a, s.b = nil, nil
	}
}

// add records the name node key. Among the first smallObject names it
// reports a repeat at once; repeats past them are found by first.
func (s *nameSet) add(t *Tree, key uint32) bool {
	if len(s.few) < smallObject {
		for _, k := range s.few {
			if bytes.Equal(s.name(t, k, &s.a), s.name(t, key, &s.b)) {
				return true
			}
		}
		s.few = append(s.few, key)
		if len(s.few) == smallObject {
			s.seed = maphash.MakeSeed()
			for _, k := range s.few {
				s.hash(t, k)
			}
		}
		return false
	}
	s.hash(t, key)
	return false
}

func (s *nameSet) hash(t *Tree, key uint32) {
	h := maphash.Bytes(s.seed, s.name(t, key, &s.a))
	s.hashed = append(s.hashed, h&^0xFFFFFFFF|uint64(key))
}

// first returns the name node of the earliest repeated name in the object
// (the first member whose name an earlier member has), if any.
func (s *nameSet) first(t *Tree) (uint32, bool) {
	if len(s.hashed) == 0 {
		return 0, false
	}
	s.sortByHash()
	found, best := false, uint32(0)
	for i := 0; i < len(s.hashed); {
		j := i + 1
		for j < len(s.hashed) && s.hashed[j]>>32 == s.hashed[i]>>32 {
			j++
		}
		if j-i > 1 {
			if k, ok := s.firstInRun(t, s.hashed[i:j]); ok && (!found || k < best) {
				found, best = true, k
			}
		}
		i = j
	}
	return best, found
}

// firstInRun returns the earliest repeated name among names of one hash,
// given in source order: names that merely share the hash are told apart
// by sorting them by name, stably, so each name's second occurrence
// follows its first.
func (s *nameSet) firstInRun(t *Tree, run []uint64) (uint32, bool) {
	keys := make([]uint32, len(run))
	for i, e := range run {
		keys[i] = uint32(e)
	}
	slices.SortStableFunc(keys, func(x, y uint32) int {
		return bytes.Compare(s.name(t, x, &s.a), s.name(t, y, &s.b))
	})
	found, best := false, uint32(0)
	for i := 1; i < len(keys); i++ {
		if bytes.Equal(s.name(t, keys[i-1], &s.a), s.name(t, keys[i], &s.b)) && (!found || keys[i] < best) {
			found, best = true, keys[i]
		}
	}
	return best, found
}

// sortByHash sorts hashed by hash, keeping source order among equal
// hashes: a stable radix sort on the high 32 bits, in four passes of 8
// bits, for large objects; a plain sort on the whole value (the node
// index is in source order) for the others.
func (s *nameSet) sortByHash() {
	if len(s.hashed) < 1<<12 {
		slices.Sort(s.hashed)
		return
	}
	s.tmp = slices.Grow(s.tmp[:0], len(s.hashed))[:len(s.hashed)]
	src, dst := s.hashed, s.tmp
	for shift := 32; shift < 64; shift += 8 {
		var count [1<<8 + 1]int
		for _, v := range src {
			count[v>>shift&0xFF+1]++
		}
		for i := 1; i < len(count); i++ {
			count[i] += count[i-1]
		}
		for _, v := range src {
			d := v >> shift & 0xFF
			dst[count[d]] = v
			count[d]++
		}
		src, dst = dst, src
	}
}

// name returns the decoded name of the String node i: its source bytes
// when it has no escapes, else the name decoded into the scratch buffer
// *buf.
func (s *nameSet) name(t *Tree, i uint32, buf *[]byte) []byte {
	n := t.at(i)
	raw := n.text(t.src)
	if !n.esc() {
		return raw
	}
	*buf = appendUnescaped((*buf)[:0], raw)
	return *buf
}
