package skill

import (
	"bytes"
	"encoding/binary"
	"sync"
	"unicode/utf8"
	"unsafe"

	"go.yaml.in/yaml/v3"
)

// fastMapping parses the frontmatter almost every skill has, without the
// YAML parser: a mapping of keys to one-line plain or quoted scalars, and
// one level of mappings of the same (metadata). It returns the mapping
// node yaml.v3 would return for src, with the same kinds, values, lines and
// columns (the fields the checks read), so that every check runs on the
// same tree; or false for anything
// else (lists, anchors, tags, block scalars, multi-line scalars, escapes,
// tabs, comments after a value, characters YAML treats specially), which
// the YAML parser then reads. Differential and fuzz tests hold the two to
// the same result.
//
// The keys and values are strings over src itself, not copies: Parse keeps
// the content they lie in as the skill's Raw. The nodes come from an arena
// the caller gives back (release) once it has read them.
func fastMapping(src []byte) (root *yaml.Node, arena *fastArena, ok bool) {
	arena = fastArenas.Get().(*fastArena)
	if root, ok = arena.read(src); !ok {
		arena.release()
		return nil, nil, false
	}
	return root, arena, true
}

// read parses src as fastMapping does, into the arena.
func (a *fastArena) read(src []byte) (*yaml.Node, bool) {
	lines := bytes.Count(src, []byte{'\n'}) + 1
	// A line makes at most two nodes (a key and its value or nested
	// mapping), and two children of one mapping: with room for that, a
	// typical frontmatter costs no allocation here.
	if cap(a.nodes) < 2*lines+1 {
		a.nodes = make([]yaml.Node, 0, 2*lines+1)
	}
	if cap(a.children) < 4*lines {
		a.children = make([]*yaml.Node, 0, 4*lines)
	}
	p := fastParser{src: src, text: unsafe.String(unsafe.SliceData(src), len(src)),
		nodes: a.nodes[:0], children: a.children[:0]}
	root, ok := p.mapping()
	a.nodes, a.children = p.nodes, p.children
	a.written = min(4*lines, cap(p.children))
	return root, ok
}

// fastArena is the memory of the nodes of one frontmatter read by the fast
// path: the checks read the nodes and keep none, so one arena serves skill
// after skill.
type fastArena struct {
	nodes    []yaml.Node
	children []*yaml.Node // the Content of every mapping, one after another
	// written bounds the children this frontmatter may have set, kept or
	// not: those of a mapping the fast path gave up on halfway lie past
	// len(children).
	written int
}

var fastArenas = sync.Pool{New: func() any { return new(fastArena) }}

// release gives the arena back for the next frontmatter; nil is a no-op
// (the YAML parser's tree is the collector's).
func (a *fastArena) release() {
	if a == nil {
		return
	}
	// Nothing of this frontmatter stays reachable. Clearing only what it
	// wrote keeps a small frontmatter cheap after a large one grew the
	// arena.
	clear(a.nodes)
	clear(a.children[:a.written])
	a.nodes, a.children = a.nodes[:0], a.children[:0]
	fastArenas.Put(a)
}

// mapping reads the whole frontmatter as the top-level mapping.
func (p *fastParser) mapping() (*yaml.Node, bool) {
	lines := bytes.Count(p.src, []byte{'\n'}) + 1
	root := p.node(yaml.MappingNode, 0, 0)
	root.Content = p.reserve(2*lines, true)
	for {
		line, ok := p.next()
		if !ok {
			break
		}
		if line.indent != 0 || !p.pair(root, line, 0) {
			return nil, false
		}
	}
	if len(root.Content) == 0 {
		return nil, false
	}
	root.Line, root.Column = root.Content[0].Line, root.Content[0].Column
	return root, true
}

// fastParser walks the lines of a frontmatter.
type fastParser struct {
	src      []byte
	text     string       // src as a string, of which keys and values are slices
	nodes    []yaml.Node  // where nodes are allocated
	children []*yaml.Node // where the Content of mappings is allocated
	off      int          // start of the next line
	lineNum  int          // 1-based number of the line last returned
	// pending is a line read ahead and not yet consumed, when hasPending.
	pending    fastLine
	hasPending bool
}

// fastLine is one line with content: its number, its indentation in
// spaces, and where the rest of it, line ending excluded, lies in the
// source (off to end). It is held in four words, which a call returns in
// registers: with the rest as a slice, copying it out of next stalled.
type fastLine struct {
	num, indent int
	off, end    int
}

// next returns the next line that holds more than blanks or a comment
// starting at its first column; ok is false at the end. A line the fast
// path does not read comes back with indent -1, which every caller
// refuses.
func (p *fastParser) next() (fastLine, bool) {
	if p.hasPending {
		p.hasPending = false
		return p.pending, true
	}
	for p.off < len(p.src) {
		start := p.off
		rest := p.src[p.off:]
		end := bytes.IndexByte(rest, '\n')
		if end < 0 {
			end = len(rest)
			p.off = len(p.src)
		} else {
			p.off += end + 1
		}
		raw := bytes.TrimSuffix(rest[:end], []byte{'\r'})
		p.lineNum++
		if !plainLine(raw) {
			return fastLine{num: p.lineNum, indent: -1}, true
		}
		text := bytes.TrimLeft(raw, " ")
		if len(text) == 0 {
			continue // blank
		}
		indent := len(raw) - len(text)
		if text[0] == '#' {
			if indent != 0 {
				return fastLine{num: p.lineNum, indent: -1}, true
			}
			continue // a comment line
		}
		return fastLine{num: p.lineNum, indent: indent, off: start + indent, end: start + len(raw)}, true
	}
	return fastLine{}, false
}

// node returns a new node of kind at line and column.
func (p *fastParser) node(kind yaml.Kind, line, column int) *yaml.Node {
	if len(p.nodes) == cap(p.nodes) {
		p.nodes = append(p.nodes, yaml.Node{})
	} else {
		p.nodes = p.nodes[:len(p.nodes)+1]
	}
	// Set field by field: a node is 150 bytes, which a composite literal
	// built on the stack and then copied, twice the stores.
	n := &p.nodes[len(p.nodes)-1]
	*n = yaml.Node{}
	n.Kind, n.Line, n.Column = kind, line, column
	return n
}

// str returns n bytes of the source at off as a string, without copying.
func (p *fastParser) str(off, n int) string { return p.text[off : off+n] }

// reserve returns an empty list of children with room for n, from the
// arena when it has that room; taken, the room is the list's alone, else
// it is lent until take gives back what the list did not use.
func (p *fastParser) reserve(n int, taken bool) []*yaml.Node {
	at := len(p.children)
	if cap(p.children)-at < n {
		return make([]*yaml.Node, 0, n)
	}
	if taken {
		p.children = p.children[:at+n]
	}
	return p.children[at : at : at+n]
}

// take ends the loan of reserve to list: the arena keeps what list used,
// and list can grow no further into the arena.
func (p *fastParser) take(list []*yaml.Node) []*yaml.Node {
	n := len(list)
	if at := len(p.children); cap(p.children)-at >= n {
		p.children = p.children[:at+n]
	}
	return list[:n:n]
}

// unread gives l back, to be returned by the next call of next.
func (p *fastParser) unread(l fastLine) { p.pending, p.hasPending = l, true }

// plainLine reports whether a line holds only characters the fast path
// reads the way YAML does: valid UTF-8, printable, no tab, no carriage
// return inside, none of the characters YAML treats as line breaks (NEL,
// LS, PS), no byte order mark.
func plainLine(b []byte) bool {
	i := 0
	// Eight bytes at a time while they are printable ASCII (0x20 to 0x7E),
	// as frontmatter lines mostly are: a byte below 0x20 borrows into its
	// high bit when 0x20 is taken from it, and one of 0x7F or more has its
	// high bit set once 1 is added. A word with either goes to the loop
	// below, which tells which byte and why.
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if ((w-0x2020202020202020)&^w|(w+0x0101010101010101)|w)&0x8080808080808080 != 0 {
			break
		}
	}
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7F {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError || r < 0xA0 || r > 0xFFFD || (r >= 0xD800 && r < 0xE000) ||
			r == 0x2028 || r == 0x2029 || r == 0xFEFF {
			return false
		}
		i += size
	}
	return true
}

// pair reads the key and value of line into mapping m, at depth 0 (the
// frontmatter) or 1 (a nested mapping, whose values must be scalars).
func (p *fastParser) pair(m *yaml.Node, line fastLine, depth int) bool {
	text := p.src[line.off:line.end]
	k := 0
	for k < len(text) && isKeyByte(text[k], k == 0) {
		k++
	}
	if k == 0 || k >= len(text) || text[k] != ':' {
		return false
	}
	key := p.node(yaml.ScalarNode, line.num, line.indent+1)
	key.Value = p.str(line.off, k)
	rest := text[k+1:]
	if len(rest) > 0 && rest[0] != ' ' {
		return false
	}
	valueText := bytes.TrimLeft(rest, " ")
	column := line.indent + k + 2 + len(rest) - len(valueText)
	if len(valueText) > 0 {
		from, to, ok := fastScalar(valueText)
		if !ok {
			return false
		}
		v := p.node(yaml.ScalarNode, line.num, column)
		at := line.off + len(text) - len(valueText)
		v.Value = p.str(at+from, to-from)
		// A more indented line after a scalar would continue it, or
		// break the document: both are the YAML parser's to read.
		if next, ok := p.next(); ok {
			if next.indent > line.indent {
				return false
			}
			p.unread(next)
		}
		m.Content = append(m.Content, key, v)
		return true
	}
	// An empty value: a nested mapping when more indented lines follow.
	next, ok := p.next()
	if ok && next.indent < 0 {
		return false
	}
	if !ok || next.indent <= line.indent {
		if ok {
			p.unread(next)
		}
		// yaml.v3 places an empty value just past the colon.
		m.Content = append(m.Content, key, p.node(yaml.ScalarNode, line.num, line.indent+k+2))
		return true
	}
	if depth > 0 {
		return false
	}
	nested := p.node(yaml.MappingNode, next.num, next.indent+1)
	// Its children take the arena's free room, which is enough for every
	// line left, and only what they used of it once read: nothing else
	// takes children meanwhile, as the values of a nested mapping are
	// scalars.
	nested.Content = p.reserve(cap(p.children)-len(p.children), false)
	for indent := next.indent; ok && next.indent == indent; next, ok = p.next() {
		if !p.pair(nested, next, depth+1) {
			return false
		}
	}
	if ok {
		if next.indent < 0 || next.indent > line.indent {
			return false // deeper, or between the two levels
		}
		p.unread(next)
	}
	nested.Content = p.take(nested.Content)
	m.Content = append(m.Content, key, nested)
	return true
}

// isKeyByte reports whether c may appear in a key the fast path reads:
// letters, digits, '_', and '-' or '.' after the first character.
func isKeyByte(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
		return true
	case c == '-' || c == '.':
		return !first
	}
	return false
}

// fastScalar returns where the value of a one-line scalar lies in text:
// a plain one, or a double- or single-quoted one without escapes.
func fastScalar(text []byte) (from, to int, ok bool) {
	switch text[0] {
	case '"', '\'':
		end := bytes.IndexByte(text[1:], text[0]) + 1
		if end < 1 || (text[0] == '"' && bytes.IndexByte(text[1:end], '\\') >= 0) {
			return 0, 0, false
		}
		if len(bytes.TrimRight(text[end+1:], " ")) > 0 {
			return 0, 0, false // more after the closing quote (a comment, say)
		}
		return 1, end, true
	case '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '%', '@', '`':
		return 0, 0, false // an indicator: YAML may read it as structure
	}
	v := bytes.TrimRight(text, " ")
	if bytes.Contains(v, []byte(": ")) || bytes.HasSuffix(v, []byte(":")) || bytes.Contains(v, []byte(" #")) {
		return 0, 0, false
	}
	return 0, len(v), true
}
