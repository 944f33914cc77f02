package skill

import (
	"bytes"
	"sync"
	"unicode/utf8"

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
// The nodes come from an array the caller gives back with release once it
// has read them.
func fastMapping(src []byte) (root *yaml.Node, release func(), ok bool) {
	lines := bytes.Count(src, []byte{'\n'}) + 1
	// One copy of the source holds every key and value, and one recycled
	// array every node: a typical frontmatter costs a handful of
	// allocations.
	arena := fastNodes.Get().(*[]yaml.Node)
	if cap(*arena) < 2*lines+2 {
		*arena = make([]yaml.Node, 0, 2*lines+2)
	}
	p := fastParser{src: src, text: string(src), nodes: (*arena)[:0]}
	release = func() {
		clear(p.nodes) // nothing of this frontmatter stays reachable
		*arena = p.nodes[:0]
		fastNodes.Put(arena)
	}
	root, ok = p.mapping()
	if !ok {
		release()
		return nil, nil, false
	}
	return root, release, true
}

// fastNodes recycles the node arrays of the fast path: the checks read the
// nodes and keep none, so one array serves skill after skill.
var fastNodes = sync.Pool{New: func() any { return new([]yaml.Node) }}

// mapping reads the whole frontmatter as the top-level mapping.
func (p *fastParser) mapping() (*yaml.Node, bool) {
	lines := bytes.Count(p.src, []byte{'\n'}) + 1
	root := p.node(yaml.MappingNode, 0, 0)
	root.Content = make([]*yaml.Node, 0, 2*lines)
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
	src     []byte
	text    string      // src as a string, of which keys and values are slices
	nodes   []yaml.Node // where nodes are allocated
	off     int         // start of the next line
	lineNum int         // 1-based number of the line last returned
	// pending is a line read ahead and not yet consumed.
	pending *fastLine
}

// fastLine is one line with content: its number, its indentation in
// spaces and the rest of it, line ending excluded, which starts at byte
// off of the source.
type fastLine struct {
	num    int
	indent int
	text   []byte
	off    int
}

// next returns the next line that holds more than blanks or a comment
// starting at its first column; ok is false at the end. A line the fast
// path does not read comes back with indent -1, which every caller
// refuses.
func (p *fastParser) next() (fastLine, bool) {
	if p.pending != nil {
		l := *p.pending
		p.pending = nil
		return l, true
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
		return fastLine{num: p.lineNum, indent: indent, text: text, off: start + indent}, true
	}
	return fastLine{}, false
}

// node returns a new node of kind at line and column.
func (p *fastParser) node(kind yaml.Kind, line, column int) *yaml.Node {
	p.nodes = append(p.nodes, yaml.Node{Kind: kind, Line: line, Column: column})
	return &p.nodes[len(p.nodes)-1]
}

// str returns n bytes of the source at off as a string, without copying.
func (p *fastParser) str(off, n int) string { return p.text[off : off+n] }

// unread gives l back, to be returned by the next call of next.
func (p *fastParser) unread(l fastLine) { p.pending = &l }

// plainLine reports whether a line holds only characters the fast path
// reads the way YAML does: valid UTF-8, printable, no tab, no carriage
// return inside, none of the characters YAML treats as line breaks (NEL,
// LS, PS), no byte order mark.
func plainLine(b []byte) bool {
	for i := 0; i < len(b); {
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
	text := line.text
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
