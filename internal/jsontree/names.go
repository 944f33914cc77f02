package jsontree

import (
	"bytes"
	"hash/maphash"
)

// smallObject is the number of member names compared one by one before a
// hash table takes over: most objects are smaller, and need no table.
const smallObject = 16

// nameSet finds a repeated member name in one object, in time linear in
// the object's size.
type nameSet struct {
	few []uint32 // the names, while the object is small
	// table is an open-addressing hash set, once the object has grown past
	// smallObject. A slot holds a name's node index plus one in its low 32
	// bits (0 is an empty slot) and the high 32 bits of the name's hash,
	// so that most probes are decided without reading the name.
	table []uint64
	count int
	seed  maphash.Seed
	a, b  []byte // scratch for decoding escaped names
}

// reset empties the set for a new object. A large table is dropped rather
// than cleared, so that many small objects after a large one do not each
// pay for its size.
func (s *nameSet) reset() {
	s.few, s.table, s.count = s.few[:0], nil, 0
}

// add records the name node key and reports whether the object already
// had that name.
func (s *nameSet) add(t *Tree, key uint32) bool {
	if s.table == nil {
		for _, k := range s.few {
			if bytes.Equal(s.name(t, k, &s.a), s.name(t, key, &s.b)) {
				return true
			}
		}
		s.few = append(s.few, key)
		if len(s.few) == smallObject {
			s.seed = maphash.MakeSeed()
			s.table = make([]uint64, 4*smallObject)
			for _, k := range s.few {
				s.insert(t, k)
			}
			s.count = len(s.few)
		}
		return false
	}
	// Grown at three quarters full: with the hash in each slot, probing
	// stays cheap, and the table costs at most 16 bytes a name.
	if 4*(s.count+1) > 3*len(s.table) {
		old := s.table
		s.table = make([]uint64, 2*len(old))
		for _, slot := range old {
			if slot != 0 {
				s.place(slot)
			}
		}
	}
	if s.insert(t, key) {
		return true
	}
	s.count++
	return false
}

// insert adds key to the table unless an equal name is there, which it
// reports.
func (s *nameSet) insert(t *Tree, key uint32) bool {
	a := s.name(t, key, &s.a)
	h := maphash.Bytes(s.seed, a)
	mask := uint64(len(s.table) - 1)
	for i := (h >> 32) & mask; ; i = (i + 1) & mask {
		slot := s.table[i]
		if slot == 0 {
			s.table[i] = h&^0xFFFFFFFF | uint64(key+1)
			return false
		}
		if slot>>32 == h>>32 && bytes.Equal(a, s.name(t, uint32(slot)-1, &s.b)) {
			return true
		}
	}
}

// place puts a slot of a smaller table into the current one.
func (s *nameSet) place(slot uint64) {
	mask := uint64(len(s.table) - 1)
	for i := (slot >> 32) & mask; ; i = (i + 1) & mask {
		if s.table[i] == 0 {
			s.table[i] = slot
			return
		}
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
