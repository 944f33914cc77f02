package jsontree

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrSyntax is matched by every *SyntaxError; ErrDuplicate and ErrDepth
// narrow it down.
var (
	ErrSyntax    = errors.New("invalid JSON")
	ErrDuplicate = errors.New("duplicate member name")
	ErrDepth     = errors.New("nesting too deep")
)

// ErrTooLarge is returned for a source of 256 MiB or more, which the
// tree's compact offsets cannot address.
var ErrTooLarge = errors.New("JSON document of 256 MiB or more")

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
// DefaultMaxDepth). The tree refers to src, which must not change
// afterwards.
func Parse(src []byte, maxDepth int) (*Tree, error) {
	p := &parser{t: &Tree{}}
	if err := p.parse(src, maxDepth); err != nil {
		return nil, err
	}
	return p.t, nil
}

// Check returns the error Parse(src, maxDepth) returns, for a caller that
// needs the verdict but not the tree (one that decodes src with
// encoding/json once it is known to be strict JSON). It parses src the
// same way, into working memory (node table, name sets) kept from one call
// to the next, so that checking many small documents allocates nothing:
// the tables Parse made for the manifests of an export were a quarter of
// what it allocated. What is kept after a call is bounded (see release),
// whatever the size of the document checked.
func Check(src []byte, maxDepth int) error {
	p := checkers.Get().(*parser)
	err := p.parse(src, maxDepth)
	p.release()
	checkers.Put(p)
	return err
}

// checkers are the parsers of Check.
var checkers = sync.Pool{New: func() any { return &parser{t: &Tree{reused: true}} }}

// parse parses src into p.t, whose table holds no nodes yet.
func (p *parser) parse(src []byte, maxDepth int) error {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	if len(src) >= maxSource {
		return ErrTooLarge
	}
	if !utf8.Valid(src) {
		return &SyntaxError{Offset: firstInvalidUTF8(src), Msg: "not valid UTF-8"}
	}
	p.src, p.pos, p.maxDepth, p.t.src = src, 0, maxDepth, src
	p.space()
	if err := p.value(0); err != nil {
		return err
	}
	p.space()
	if p.pos < len(src) {
		return p.fail("unexpected data after the JSON value")
	}
	return nil
}

// keptChunks and keptEntries bound what a parser of Check keeps between
// calls: one chunk of the node table (48 KB: a manifest of up to 4,096
// values fits), and name sets and a path of up to keptEntries entries each.
const (
	keptChunks  = 1
	keptEntries = 1 << 10
)

// release empties a parser of Check for the next document: it forgets the
// source (not to keep it alive), and the memory past the bounds above, so
// that one huge document checked does not stay in the pool.
func (p *parser) release() {
	p.src, p.t.src, p.t.count = nil, nil, 0
	clear(p.t.chunks[min(keptChunks, len(p.t.chunks)):])
	p.t.chunks = p.t.chunks[:min(keptChunks, len(p.t.chunks))]
	p.path = p.path[:0]
	if cap(p.path) > keptEntries {
		p.path = nil
	}
	for _, s := range p.names {
		s.drop(keptEntries)
	}
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
	t        *Tree
	// path leads down to the value being parsed, for the pointer of a
	// duplicate name; it is turned into text only then.
	path []step
	// names holds the member names of each open object, by depth.
	names []*nameSet
}

// step is one level of the path: a member (by its name node) or an array
// index.
type step struct {
	key   uint32
	index int
	isKey bool
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

// value parses the value at p.pos and adds it, with its subtree, to the
// tree.
func (p *parser) value(depth int) error {
	if p.pos >= len(p.src) {
		return p.fail("unexpected end of JSON input")
	}
	start := p.pos
	switch c := p.src[p.pos]; {
	case c == '{' || c == '[':
		if depth >= p.maxDepth {
			return &SyntaxError{Offset: start, Msg: fmt.Sprintf("nesting deeper than %d levels", p.maxDepth), kind: ErrDepth}
		}
		kind := Array
		if c == '{' {
			kind = Object
		}
		i := p.t.add(node{off: uint32(start)})
		var err error
		if kind == Object {
			err = p.object(depth + 1)
		} else {
			err = p.array(depth + 1)
		}
		if err != nil {
			return err
		}
		n := p.t.at(i)
		n.meta, n.next = newMeta(p.pos, kind, false), p.t.count
		return nil
	case c == '"':
		_, err := p.string()
		return err
	case c == 't':
		return p.literal("true", Bool)
	case c == 'f':
		return p.literal("false", Bool)
	case c == 'n':
		return p.literal("null", Null)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		return p.fail("unexpected character %q", rune(c))
	}
}

// leaf adds a value without children that spans start to p.pos.
func (p *parser) leaf(start int, kind Kind, esc bool) uint32 {
	return p.t.add(node{off: uint32(start), meta: newMeta(p.pos, kind, esc), next: p.t.count + 1})
}

func (p *parser) literal(word string, kind Kind) error {
	if !strings.HasPrefix(string(p.src[p.pos:min(len(p.src), p.pos+len(word))]), word) {
		return p.fail("invalid literal")
	}
	start := p.pos
	p.pos += len(word)
	p.leaf(start, kind, false)
	return nil
}

// enter consumes the opening bracket of a container and reports whether
// it is empty, in which case its closing bracket is consumed too.
func (p *parser) enter(closer byte) bool {
	p.pos++
	p.space()
	if p.pos < len(p.src) && p.src[p.pos] == closer {
		p.pos++
		return true
	}
	return false
}

// next consumes what follows an element: a comma, or the closing bracket,
// when it reports done.
func (p *parser) next(closer byte, what string) (done bool, err error) {
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
		return true, nil
	}
	return false, p.fail("expected ',' or '%c' in %s", closer, what)
}

func (p *parser) object(depth int) error {
	if p.enter('}') {
		return nil
	}
	for len(p.names) < depth {
		p.names = append(p.names, &nameSet{})
	}
	names := p.names[depth-1]
	names.reset(len(p.path))
	err := p.members(names, depth)
	if err != nil {
		return p.earlier(names, err)
	}
	if key, ok := names.first(p.t); ok {
		return p.duplicate(key, names.depth)
	}
	return nil
}

// members parses the members of an object up to its closing brace.
func (p *parser) members(names *nameSet, depth int) error {
	for {
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			return p.fail("expected a member name")
		}
		key, err := p.string()
		if err != nil {
			return err
		}
		if names.add(p.t, key) {
			return p.duplicate(key, names.depth)
		}
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return p.fail("expected ':' after a member name")
		}
		p.pos++
		p.space()
		p.path = append(p.path, step{key: key, isKey: true})
		err = p.value(depth)
		p.path = p.path[:len(p.path)-1]
		if err != nil {
			return err
		}
		done, err := p.next('}', "an object")
		if err != nil || done {
			return err
		}
	}
}

// earlier returns the error a parse that checks every name as it comes
// would have met first: err, or a repeated name of the object that names
// holds standing before it.
func (p *parser) earlier(names *nameSet, err error) error {
	se, ok := err.(*SyntaxError)
	if !ok {
		return err
	}
	if key, ok := names.first(p.t); ok && int(p.t.at(key).off) < se.Offset {
		return p.duplicate(key, names.depth)
	}
	return err
}

// duplicate is the error for the repeated name node key, in the object
// whose path has depth steps.
func (p *parser) duplicate(key uint32, depth int) error {
	return &SyntaxError{Offset: int(p.t.at(key).off), Pointer: p.pointer(depth), kind: ErrDuplicate,
		Msg: fmt.Sprintf("duplicate member name %q", Node{p.t, key}.Str())}
}

func (p *parser) array(depth int) error {
	if p.enter(']') {
		return nil
	}
	p.path = append(p.path, step{})
	defer func() { p.path = p.path[:len(p.path)-1] }()
	for i := 0; ; i++ {
		p.space()
		p.path[len(p.path)-1].index = i
		if err := p.value(depth); err != nil {
			return err
		}
		done, err := p.next(']', "an array")
		if err != nil || done {
			return err
		}
	}
}

// pointer is the RFC 6901 pointer of the first depth steps of the path.
func (p *parser) pointer(depth int) string {
	var b strings.Builder
	for _, s := range p.path[:depth] {
		b.WriteByte('/')
		if s.isKey {
			b.WriteString(EscapePointer(Node{p.t, s.key}.Str()))
		} else {
			b.WriteString(strconv.Itoa(s.index))
		}
	}
	return b.String()
}

func (p *parser) number() error {
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
		return p.fail("invalid number")
	}
	if p.pos < len(p.src) && p.src[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return p.fail("invalid number")
		}
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return p.fail("invalid number")
		}
	}
	p.leaf(start, Number, false)
	return nil
}

// string parses the string token at p.pos, adds it as a String node and
// returns its index. Escapes are checked here and decoded only on demand.
func (p *parser) string() (uint32, error) {
	start := p.pos
	p.pos++ // opening quote
	escaped := false
	for {
		if p.pos >= len(p.src) {
			return 0, p.fail("unterminated string")
		}
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			if escaped {
				if err := checkEscapes(p.src[start+1:p.pos-1], start+1); err != nil {
					return 0, err
				}
			}
			return p.leaf(start, String, escaped), nil
		case c == '\\':
			escaped = true
			p.pos += 2
		case c < 0x20:
			return 0, p.fail("control character in a string")
		default:
			p.pos++
		}
	}
}

// checkEscapes reports the first invalid escape of a string's raw
// contents, which start at offset base of the source.
func checkEscapes(raw []byte, base int) error {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++
		if i >= len(raw) {
			return badEscape(base + i - 1)
		}
		switch raw[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			if _, ok := hex4(raw[i+1:]); !ok {
				return badEscape(base + i - 1)
			}
			i += 4
		default:
			return badEscape(base + i - 1)
		}
	}
	return nil
}

func badEscape(offset int) error {
	return &SyntaxError{Offset: offset, Msg: "invalid escape in a string"}
}

// appendUnescaped appends the decoded contents of a string whose escapes
// checkEscapes accepted. A lone surrogate cannot be UTF-8: it decodes to
// U+FFFD, as encoding/json does.
func appendUnescaped(dst, raw []byte) []byte {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, _ := hex4(raw[i+1:])
			i += 4
			if utf16.IsSurrogate(r) {
				if len(raw) > i+2 && raw[i+1] == '\\' && raw[i+2] == 'u' {
					if r2, ok := hex4(raw[i+3:]); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							dst = utf8.AppendRune(dst, dec)
							i += 6
							continue
						}
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, raw[i])
		}
	}
	return dst
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
