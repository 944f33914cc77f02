// Package jsontree parses JSON strictly into a tree that remembers where
// every value stands in the source, so that diagnostics can name a line,
// a column and an RFC 6901 pointer.
//
// Strict means: UTF-8 only, RFC 8259 grammar with nothing after the value,
// a bounded nesting depth, and no duplicate member names in any object at
// any level. A duplicate name is ambiguous — parsers disagree on which
// value wins — so plugkit treats such a document as invalid JSON.
package jsontree

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the JSON type of a node.
type Kind int

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

// Node is one JSON value and its place in the source.
type Node struct {
	Kind    Kind
	Offset  int // byte offset where the value starts
	End     int // byte offset just past the value
	Str     string
	Bool    bool
	Elems   []*Node   // Array
	Members []*Member // Object, in source order
}

// Member is one name/value pair of an object.
type Member struct {
	Name   string
	Offset int // byte offset of the name's opening quote
	Value  *Node
}

// Get returns the value of the member called name, or nil.
func (n *Node) Get(name string) *Node {
	for _, m := range n.Members {
		if m.Name == name {
			return m.Value
		}
	}
	return nil
}

// Raw returns the source bytes of the value.
func (n *Node) Raw(src []byte) []byte { return src[n.Offset:n.End] }

// ErrSyntax is matched by every *SyntaxError; ErrDuplicate and ErrDepth
// narrow it down.
var (
	ErrSyntax    = errors.New("invalid JSON")
	ErrDuplicate = errors.New("duplicate member name")
	ErrDepth     = errors.New("nesting too deep")
)

// SyntaxError says where and why a document is not strict JSON.
type SyntaxError struct {
	Offset  int
	Pointer string // pointer of the object holding a duplicate name, else ""
	Msg     string
	kind    error
}

func (e *SyntaxError) Error() string { return e.Msg }

// Is matches ErrSyntax, and ErrDuplicate or ErrDepth when they apply.
func (e *SyntaxError) Is(target error) bool {
	return target == ErrSyntax || (e.kind != nil && target == e.kind)
}

// DefaultMaxDepth is the nesting bound Parse uses when given 0.
const DefaultMaxDepth = 64

// Parse parses src strictly. maxDepth bounds nesting (0 means
// DefaultMaxDepth).
func Parse(src []byte, maxDepth int) (*Node, error) {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	if !utf8.Valid(src) {
		return nil, &SyntaxError{Offset: firstInvalidUTF8(src), Msg: "not valid UTF-8"}
	}
	p := &parser{src: src, maxDepth: maxDepth}
	p.space()
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos < len(src) {
		return nil, p.fail("unexpected data after the JSON value")
	}
	return n, nil
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

type parser struct {
	src      []byte
	pos      int
	maxDepth int
	path     []string // member names and indexes down to the current value
}

func (p *parser) fail(format string, args ...any) error {
	return &SyntaxError{Offset: p.pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) space() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (*Node, error) {
	if p.pos >= len(p.src) {
		return nil, p.fail("unexpected end of JSON input")
	}
	start := p.pos
	switch c := p.src[p.pos]; {
	case c == '{' || c == '[':
		if depth >= p.maxDepth {
			return nil, &SyntaxError{Offset: start, Msg: fmt.Sprintf("nesting deeper than %d levels", p.maxDepth), kind: ErrDepth}
		}
		if c == '{' {
			return p.object(depth + 1)
		}
		return p.array(depth + 1)
	case c == '"':
		s, err := p.string()
		if err != nil {
			return nil, err
		}
		return &Node{Kind: String, Offset: start, End: p.pos, Str: s}, nil
	case c == 't':
		return p.literal("true", &Node{Kind: Bool, Bool: true})
	case c == 'f':
		return p.literal("false", &Node{Kind: Bool})
	case c == 'n':
		return p.literal("null", &Node{Kind: Null})
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		return nil, p.fail("unexpected character %q", rune(c))
	}
}

func (p *parser) literal(word string, n *Node) (*Node, error) {
	if !strings.HasPrefix(string(p.src[p.pos:min(len(p.src), p.pos+len(word))]), word) {
		return nil, p.fail("invalid literal")
	}
	n.Offset = p.pos
	p.pos += len(word)
	n.End = p.pos
	return n, nil
}

// enter consumes the opening bracket of n and reports whether the
// container is empty, in which case its closing bracket is consumed too.
func (p *parser) enter(n *Node, closer byte) bool {
	p.pos++
	p.space()
	if p.pos < len(p.src) && p.src[p.pos] == closer {
		p.pos++
		n.End = p.pos
		return true
	}
	return false
}

// next consumes what follows an element of n: a comma, or the closing
// bracket, when it reports done.
func (p *parser) next(n *Node, closer byte, what string) (done bool, err error) {
	p.space()
	if p.pos >= len(p.src) {
		return false, p.fail("unexpected end of JSON input")
	}
	switch p.src[p.pos] {
	case ',':
		p.pos++
		return false, nil
	case closer:
		p.pos++
		n.End = p.pos
		return true, nil
	}
	return false, p.fail("expected ',' or '%c' in %s", closer, what)
}

func (p *parser) object(depth int) (*Node, error) {
	n := &Node{Kind: Object, Offset: p.pos}
	if p.enter(n, '}') {
		return n, nil
	}
	seen := map[string]bool{}
	for {
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			return nil, p.fail("expected a member name")
		}
		nameAt := p.pos
		name, err := p.string()
		if err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, &SyntaxError{Offset: nameAt, Pointer: p.pointer(), kind: ErrDuplicate,
				Msg: fmt.Sprintf("duplicate member name %q", name)}
		}
		seen[name] = true
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return nil, p.fail("expected ':' after a member name")
		}
		p.pos++
		p.space()
		p.path = append(p.path, name)
		v, err := p.value(depth)
		p.path = p.path[:len(p.path)-1]
		if err != nil {
			return nil, err
		}
		n.Members = append(n.Members, &Member{Name: name, Offset: nameAt, Value: v})
		done, err := p.next(n, '}', "an object")
		if err != nil {
			return nil, err
		}
		if done {
			return n, nil
		}
	}
}

func (p *parser) array(depth int) (*Node, error) {
	n := &Node{Kind: Array, Offset: p.pos}
	if p.enter(n, ']') {
		return n, nil
	}
	for {
		p.space()
		p.path = append(p.path, strconv.Itoa(len(n.Elems)))
		v, err := p.value(depth)
		p.path = p.path[:len(p.path)-1]
		if err != nil {
			return nil, err
		}
		n.Elems = append(n.Elems, v)
		done, err := p.next(n, ']', "an array")
		if err != nil {
			return nil, err
		}
		if done {
			return n, nil
		}
	}
}

// pointer is the RFC 6901 pointer of the value being parsed.
func (p *parser) pointer() string {
	var b strings.Builder
	for _, tok := range p.path {
		b.WriteByte('/')
		b.WriteString(EscapePointer(tok))
	}
	return b.String()
}

func (p *parser) number() (*Node, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.src[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.src) && p.src[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return nil, p.fail("invalid number")
	}
	if p.pos < len(p.src) && p.src[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.fail("invalid number")
		}
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.fail("invalid number")
		}
	}
	return &Node{Kind: Number, Offset: start, End: p.pos, Str: string(p.src[start:p.pos])}, nil
}

// string parses a string token at p.pos and returns its decoded value.
func (p *parser) string() (string, error) {
	p.pos++ // opening quote
	start := p.pos
	escaped := false
	for {
		if p.pos >= len(p.src) {
			return "", p.fail("unterminated string")
		}
		c := p.src[p.pos]
		switch {
		case c == '"':
			raw := p.src[start:p.pos]
			p.pos++
			if !escaped {
				return string(raw), nil
			}
			return p.unescape(raw, start)
		case c == '\\':
			escaped = true
			p.pos += 2
		case c < 0x20:
			return "", p.fail("control character in a string")
		default:
			p.pos++
		}
	}
}

func (p *parser) unescape(raw []byte, base int) (string, error) {
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		bad := &SyntaxError{Offset: base + i - 1, Msg: "invalid escape in a string"}
		if i >= len(raw) {
			return "", bad
		}
		switch raw[i] {
		case '"', '\\', '/':
			b.WriteByte(raw[i])
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := hex4(raw[i+1:])
			if !ok {
				return "", bad
			}
			i += 4
			if utf16.IsSurrogate(r) {
				// A lone surrogate cannot be UTF-8: it decodes to U+FFFD,
				// as encoding/json does.
				if len(raw) > i+2 && raw[i+1] == '\\' && raw[i+2] == 'u' {
					if r2, ok := hex4(raw[i+3:]); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							b.WriteRune(dec)
							i += 6
							continue
						}
					}
				}
				r = utf8.RuneError
			}
			b.WriteRune(r)
		default:
			return "", bad
		}
	}
	return b.String(), nil
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[:4]), 16, 32)
	return rune(v), err == nil
}

// EscapePointer escapes one reference token of an RFC 6901 pointer.
func EscapePointer(token string) string {
	if !strings.ContainsAny(token, "~/") {
		return token
	}
	return strings.ReplaceAll(strings.ReplaceAll(token, "~", "~0"), "/", "~1")
}

// LineCol converts a byte offset in src to a 1-based line and a 1-based
// byte column.
func LineCol(src []byte, offset int) (line, col int) {
	offset = min(offset, len(src))
	line = 1
	lineStart := 0
	for i := 0; i < offset; i++ {
		if src[i] == '\n' {
			line++
			lineStart = i + 1
		}
	}
	return line, offset - lineStart + 1
}
