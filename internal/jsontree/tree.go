// Package jsontree parses JSON strictly into a compact tree that remembers
// where every value stands in the source, so that diagnostics can name a
// line, a column and an RFC 6901 pointer.
//
// Strict means: UTF-8 only, RFC 8259 grammar with nothing after the value,
// a bounded nesting depth, and no duplicate member names in any object at
// any level. A duplicate name is ambiguous — parsers disagree on which
// value wins — so plugkit treats such a document as invalid JSON.
//
// The tree costs what the document's size costs, whatever its shape: every
// value is one 12-byte record in a flat, chunked table, strings are decoded
// only when asked for, and duplicate names are found with a hash table per
// large object. Parsing is linear in the size of the source.
package jsontree

import (
	"iter"
	"strings"
)

// Kind is the JSON type of a node.
type Kind uint8

// The JSON types.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

var kindNames = [...]string{"null", "boolean", "number", "string", "array", "object"}

func (k Kind) String() string { return kindNames[k] }

// node is one value of the tree, in 12 bytes. Values are stored in
// document order, so a container's first child directly follows it and
// next skips its subtree. An object's children alternate: a String node
// for a member name, then the member's value.
type node struct {
	off  uint32 // byte offset where the value starts
	meta uint32 // the end offset (offsetBits), the kind and the escape flag
	next uint32 // index of the node after this value's subtree
}

// Offsets take offsetBits bits of node.meta; the kind and a flag for a
// string holding escapes (decoded on demand) take the rest.
const (
	offsetBits = 28
	maxSource  = 1 << offsetBits
	escFlag    = 1 << 31
	kindShift  = offsetBits
)

func newMeta(end int, kind Kind, esc bool) uint32 {
	m := uint32(end) | uint32(kind)<<kindShift
	if esc {
		m |= escFlag
	}
	return m
}

func (n *node) end() uint32 { return n.meta & (maxSource - 1) }
func (n *node) kind() Kind  { return Kind(n.meta >> kindShift & 7) }
func (n *node) esc() bool   { return n.meta&escFlag != 0 }

// text returns the raw contents of a string node, between its quotes.
func (n *node) text(src []byte) []byte { return src[n.off+1 : n.end()-1] }

// chunkBits sizes the chunks of the node table: the table grows by whole
// chunks, never by copying what it holds, so its peak is its size.
const chunkBits = 12

// Tree is a parsed document. It refers to the source it was parsed from,
// which must not change afterwards.
type Tree struct {
	src    []byte
	chunks [][]node
	count  uint32
	// reused marks the table of a Check parser, filled again for each
	// document: its chunks are kept, so all are whole.
	reused bool
}

func (t *Tree) at(i uint32) *node { return &t.chunks[i>>chunkBits][i&(1<<chunkBits-1)] }

// add appends a node and returns its index.
func (t *Tree) add(n node) uint32 {
	i := t.count
	if i&(1<<chunkBits-1) == 0 && int(i>>chunkBits) == len(t.chunks) {
		size := 1 << chunkBits
		if i == 0 && !t.reused {
			// Every node starts at a byte of its own (a member name at its
			// quote, its value after the colon, a container's first child
			// after the bracket), so a document has no more nodes than
			// bytes: a small one gets a small table, not a whole chunk.
			size = min(size, len(t.src)+1)
		}
		t.chunks = append(t.chunks, make([]node, size))
	}
	*t.at(i) = n
	t.count++
	return i
}

// Root returns the document's top-level value.
func (t *Tree) Root() Node { return Node{t, 0} }

// Source returns the bytes the tree was parsed from.
func (t *Tree) Source() []byte { return t.src }

// Node is one JSON value of a Tree. It is a small value: copy it freely.
// The zero Node stands for no value (see Get): it has no elements and no
// members, and only Exists, Len, Elems and Members may be called on it.
type Node struct {
	t *Tree
	i uint32
}

// Exists reports whether n is a value rather than the zero Node.
func (n Node) Exists() bool { return n.t != nil }

func (n Node) node() *node { return n.t.at(n.i) }

// Kind is the JSON type of the value.
func (n Node) Kind() Kind { return n.node().kind() }

// Offset is the byte offset where the value starts in the source.
func (n Node) Offset() int { return int(n.node().off) }

// Raw returns the source bytes of the value.
func (n Node) Raw() []byte {
	v := n.node()
	return n.t.src[v.off:v.end()]
}

// Str returns the decoded value of a string, the text of a number as
// written, and "" for other kinds. Decoding a string allocates; compare
// with Equal to avoid it.
func (n Node) Str() string {
	v := n.node()
	switch v.kind() {
	case String:
		raw := v.text(n.t.src)
		if !v.esc() {
			return string(raw)
		}
		return string(appendUnescaped(make([]byte, 0, len(raw)), raw))
	case Number:
		return string(n.Raw())
	}
	return ""
}

// AppendStr appends what Str returns to dst, without allocating beyond
// dst's growth.
func (n Node) AppendStr(dst []byte) []byte {
	v := n.node()
	switch v.kind() {
	case String:
		raw := v.text(n.t.src)
		if !v.esc() {
			return append(dst, raw...)
		}
		return appendUnescaped(dst, raw)
	case Number:
		return append(dst, n.Raw()...)
	}
	return dst
}

// Names decodes the member names of one object into strings that share
// one allocation. Member.Name allocates a string per name; an object of a
// million members would hold a million small strings (each padded to 16
// bytes under the race detector), where Names holds one.
type Names struct {
	b       strings.Builder
	scratch []byte
}

// NewNames returns a Names sized to hold every member name of obj.
func NewNames(obj Node) *Names {
	size := 0
	for m := range obj.Members() {
		size += len(m.Key.Raw()) // quotes and escapes: at least the decoded size
	}
	s := new(Names)
	s.b.Grow(size)
	return s
}

// Name returns the decoded name of key, a member name of the object given
// to NewNames.
func (s *Names) Name(key Node) string {
	start := s.b.Len()
	s.scratch = key.AppendStr(s.scratch[:0])
	s.b.Write(s.scratch)
	// Bytes written to a Builder never change, so the substring stays
	// valid as more names are written (even were the buffer to grow).
	return s.b.String()[start:]
}

// Equal reports whether n is the string s, without decoding n when it
// holds no escapes.
func (n Node) Equal(s string) bool {
	v := n.node()
	if v.kind() != String {
		return false
	}
	if !v.esc() {
		return string(v.text(n.t.src)) == s
	}
	return n.Str() == s
}

// Bool returns the value of a boolean.
func (n Node) Bool() bool { v := n.node(); return v.kind() == Bool && n.t.src[v.off] == 't' }

// children iterates over the direct children of a container.
func (n Node) children(yield func(Node) bool) {
	if !n.Exists() {
		return
	}
	v := n.node()
	if k := v.kind(); k != Array && k != Object {
		return
	}
	for c := n.i + 1; c < v.next; c = n.t.at(c).next {
		if !yield(Node{n.t, c}) {
			return
		}
	}
}

// Len returns the number of elements of an array or members of an object,
// 0 for other kinds. It counts them, in time linear in their number.
func (n Node) Len() int {
	count := 0
	for range n.children {
		count++
	}
	if count > 0 && n.Kind() == Object {
		return count / 2
	}
	return count
}

// Elems iterates over the elements of an array with their indexes.
func (n Node) Elems() iter.Seq2[int, Node] {
	return func(yield func(int, Node) bool) {
		if !n.Exists() || n.Kind() != Array {
			return
		}
		i := 0
		for c := range n.children {
			if !yield(i, c) {
				return
			}
			i++
		}
	}
}

// Member is one name/value pair of an object.
type Member struct {
	Key   Node // the member name, a String node
	Value Node
}

// Name returns the decoded member name.
func (m Member) Name() string { return m.Key.Str() }

// Offset is the byte offset of the name's opening quote.
func (m Member) Offset() int { return m.Key.Offset() }

// Members iterates over the members of an object in source order.
func (n Node) Members() iter.Seq[Member] {
	return func(yield func(Member) bool) {
		if !n.Exists() || n.Kind() != Object {
			return
		}
		var key Node
		first := true
		for c := range n.children {
			if first {
				key = c
			} else if !yield(Member{key, c}) {
				return
			}
			first = !first
		}
	}
}

// Get returns the value of the member called name, and whether there is
// one.
func (n Node) Get(name string) (Node, bool) {
	for m := range n.Members() {
		if m.Key.Equal(name) {
			return m.Value, true
		}
	}
	return Node{}, false
}

// EscapePointer escapes one reference token of an RFC 6901 pointer.
func EscapePointer(token string) string {
	if !strings.ContainsAny(token, "~/") {
		return token
	}
	return strings.ReplaceAll(strings.ReplaceAll(token, "~", "~0"), "/", "~1")
}
