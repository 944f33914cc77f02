package jsontree

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// toAny converts a tree to the values encoding/json decodes to with
// UseNumber, so that the two parsers can be compared. Numbers stay as
// written: a number out of float64's range (1e700) is valid JSON.
func toAny(n Node) any {
	switch n.Kind() {
	case Null:
		return nil
	case Bool:
		return n.Bool()
	case Number:
		return json.Number(n.Str())
	case String:
		return n.Str()
	case Array:
		out := []any{}
		for _, e := range n.Elems() {
			out = append(out, toAny(e))
		}
		return out
	default:
		out := map[string]any{}
		for m := range n.Members() {
			out[m.Name()] = toAny(m.Value)
		}
		return out
	}
}

// decode is what encoding/json makes of doc, numbers kept as written.
func decode(doc []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

func TestParseAgreesWithEncodingJSON(t *testing.T) {
	for _, doc := range []string{
		`{}`, `[]`, `null`, `true`, `false`, `0`, `-0.5e+10`, `1E3`, `1e700`, `"a\u00e9\n\"\\\/"`,
		`{"a": [1, {"b": null}], "c": "\ud83d\ude00"}`, " \t\n{ \"a\" : 1 } \r\n", `"\ud800"`, `"\udc00\ud800x"`,
		`[{"a": {}}, [], [[]], {"b": [1, 2]}, "x"]`,
	} {
		tree, err := Parse([]byte(doc), 0)
		if err != nil {
			t.Errorf("%q: %v", doc, err)
			continue
		}
		want, err := decode([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if got := toAny(tree.Root()); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %#v, want %#v", doc, got, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		doc    string
		offset int
		kind   error
	}{
		{``, 0, nil}, {`{`, 1, nil}, {`{"a" 1}`, 5, nil}, {`{"a": 1,}`, 8, nil}, {`[1,]`, 3, nil},
		{`01`, 1, nil}, {`1.`, 2, nil}, {`-`, 1, nil}, {`1e`, 2, nil}, {`tru`, 0, nil}, {`nul`, 0, nil},
		{`"a`, 2, nil}, {"\"a\tb\"", 2, nil}, {`"\x"`, 1, nil}, {`"\u12"`, 1, nil}, {`"\u12g4"`, 1, nil}, {`{} {}`, 3, nil},
		{"\"\xff\"", 1, nil}, {`'a'`, 0, nil}, {`{a: 1}`, 1, nil}, {`"\x` + "\t\"", 3, nil},
		{`{"a": 1, "a": 2}`, 9, ErrDuplicate},
		{`{"a": 1, "\u0061": 2}`, 9, ErrDuplicate},
		{`{"x": {"a": 1, "b": {}, "a": 2}}`, 24, ErrDuplicate},
		{`[[[[1]]]]`, 3, ErrDepth},
	} {
		_, err := parseChecked(t, []byte(c.doc), 3)
		var se *SyntaxError
		if !errors.As(err, &se) || !errors.Is(err, ErrSyntax) {
			t.Errorf("%q: err %v, want a syntax error", c.doc, err)
			continue
		}
		if se.Offset != c.offset {
			t.Errorf("%q: offset %d, want %d (%v)", c.doc, se.Offset, c.offset, err)
		}
		if c.kind != nil && !errors.Is(err, c.kind) {
			t.Errorf("%q: %v is not %v", c.doc, err, c.kind)
		}
	}
	_, err := parseChecked(t, []byte(`{"x": [0, {"a~/": {"a": 1, "a": 2}}]}`), 0)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Pointer != "/x/1/a~0~1" || se.Msg != `duplicate member name "a"` {
		t.Errorf("duplicate pointer: %v %+v", err, se)
	}
}

// TestDuplicatesInLargeObjects covers objects past the size where names are
// compared one by one: a duplicate is found whether written the same way
// or through escapes, and objects of any size without one are accepted.
func TestDuplicatesInLargeObjects(t *testing.T) {
	object := func(n int, extra string) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			fmt.Fprintf(&b, `"k%d": %d, `, i, i)
		}
		b.WriteString(extra + `"end": 0}`)
		return b.String()
	}
	for _, n := range []int{0, 1, smallObject - 1, smallObject, smallObject + 1, 1000, 5000} {
		if _, err := parseChecked(t, []byte(object(n, "")), 0); err != nil {
			t.Errorf("%d members: %v", n, err)
		}
		if n == 0 {
			continue
		}
		for _, dup := range []string{fmt.Sprintf(`"k%d": 0, `, n-1), `"k\u0030": 0, `, `"\u006b0": 0, `} {
			doc := object(n, dup)
			_, err := parseChecked(t, []byte(doc), 0)
			var se *SyntaxError
			if !errors.As(err, &se) || !errors.Is(err, ErrDuplicate) {
				t.Errorf("%d members + %s: err %v", n, dup, err)
				continue
			}
			if want := strings.LastIndex(doc, dup); se.Offset != want {
				t.Errorf("%d members + %s: offset %d, want %d", n, dup, se.Offset, want)
			}
		}
	}
	// The first error in the source wins, whether the repeated name or a
	// syntax error comes first, in this object or an enclosing one.
	wide := object(100, "")
	wide = wide[:len(wide)-1] // open: '"end": 0' is its last member
	for _, c := range []struct {
		doc    string
		offset func(doc string) int
		kind   error
	}{
		{wide + `, "k5": 1, "x": [1,]}`, func(d string) int { return strings.LastIndex(d, `"k5"`) }, ErrDuplicate},
		{wide + `, "x": [1,], "k5": 1}`, func(d string) int { return strings.Index(d, `[1,]`) + 3 }, nil},
		{wide + `, "k5": {"a": 1, "a": 2}}`, func(d string) int { return strings.LastIndex(d, `"k5"`) }, ErrDuplicate},
		{wide + `, "y": {"a": 1, "a": 2}, "k5": 0}`, func(d string) int { return strings.LastIndex(d, `"a"`) }, ErrDuplicate},
		{`{"o": ` + wide + `, "k7": 0}, "o": 1}`, func(d string) int { return strings.LastIndex(d, `"k7"`) }, ErrDuplicate},
		{`{"o": ` + wide + `}, "o": 1, "k": [}`, func(d string) int { return strings.LastIndex(d, `"o"`) }, ErrDuplicate},
		{wide + `, "k99": 1, "k98": 1}`, func(d string) int { return strings.LastIndex(d, `"k99"`) }, ErrDuplicate},
		{wide + `, "k5" 1, "k6": 1}`, func(d string) int { return strings.LastIndex(d, `"k5"`) }, ErrDuplicate},
	} {
		_, err := parseChecked(t, []byte(c.doc), 0)
		var se *SyntaxError
		if !errors.As(err, &se) || errors.Is(err, ErrDuplicate) != (c.kind != nil) {
			t.Errorf("%.40s…: err %v, want a duplicate: %v", c.doc[len(c.doc)-40:], err, c.kind != nil)
			continue
		}
		if want := c.offset(c.doc); se.Offset != want {
			t.Errorf("%.40s…: offset %d, want %d (%v)", c.doc[len(c.doc)-40:], se.Offset, want, err)
		}
	}
	// Many small objects after a large one, at the same depth.
	doc := "[" + object(5000, "") + strings.Repeat(`, {"a": 1, "b": 2}`, 5000) + "]"
	if _, err := parseChecked(t, []byte(doc), 0); err != nil {
		t.Fatal(err)
	}
}

func TestPositions(t *testing.T) {
	src := []byte("{\n  \"a\": [1,\n    \"x\"],\n  \"b~/c\": true\n}")
	tree, err := Parse(src, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := tree.Root().Get("a")
	var x Node
	for i, e := range a.Elems() {
		if i == 1 {
			x = e
		}
	}
	if line, col := NewLines(src).Position(x.Offset()); line != 3 || col != 5 || string(x.Raw()) != `"x"` {
		t.Errorf("x at %d:%d raw %q", line, col, x.Raw())
	}
	if _, ok := tree.Root().Get("missing"); ok || tree.Root().Len() != 2 || EscapePointer("b~/c") != "b~0~1c" {
		t.Error("members or pointer escaping wrong")
	}
}

// TestLines compares Position with counting from the start, around block
// boundaries, on long lines and on many short ones.
func TestLines(t *testing.T) {
	naive := func(src []byte, offset int) (int, int) {
		line, start := 1, 0
		for i := 0; i < offset; i++ {
			if src[i] == '\n' {
				line, start = line+1, i+1
			}
		}
		return line, offset - start + 1
	}
	for _, src := range [][]byte{
		nil, []byte("\n"), []byte("abc"),
		bytes.Repeat([]byte("\n"), 3*lineBlock+7),
		bytes.Repeat([]byte("x"), 3*lineBlock),
		bytes.Repeat([]byte("ab\ncdefg\n\n"), lineBlock),
		append(bytes.Repeat([]byte("y"), 2*lineBlock-1), bytes.Repeat([]byte("\nz"), lineBlock)...),
	} {
		l := NewLines(src)
		for off := 0; off <= len(src); off += 1 + off%97 {
			gl, gc := l.Position(off)
			wl, wc := naive(src, off)
			if gl != wl || gc != wc {
				t.Fatalf("len %d offset %d: %d:%d, want %d:%d", len(src), off, gl, gc, wl, wc)
			}
		}
		if gl, gc := l.Position(len(src) + 10); gl < 1 || gc < 1 {
			t.Errorf("past the end: %d:%d", gl, gc)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2,{"b":null}]}`, `"\ud800\udc00"`, `{"a":1,"a":2}`, `[[[[[[]]]]]]`, `-0.0e-0`, `1e700`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tree, err := parseChecked(t, b, 0)
		// encoding/json tolerates invalid UTF-8; RFC 8259 and this package do not.
		valid := json.Valid(b) && utf8.Valid(b)
		if err == nil && !valid {
			t.Fatalf("accepted invalid JSON %q", b)
		}
		if err != nil && valid && !errors.Is(err, ErrDuplicate) && !errors.Is(err, ErrDepth) {
			t.Fatalf("refused valid JSON %q: %v", b, err)
		}
		if err == nil && !strings.Contains(string(b), `\u`) {
			want, derr := decode(b)
			if derr != nil {
				t.Fatalf("%q: encoding/json: %v", b, derr)
			}
			if got := toAny(tree.Root()); !reflect.DeepEqual(got, want) {
				t.Fatalf("%q: got %#v, want %#v", b, got, want)
			}
		}
	})
}

// TestNameSetHashCollisions: names that share a hash are told apart, and
// the earliest second occurrence of any name is the one reported.
func TestNameSetHashCollisions(t *testing.T) {
	for _, size := range []int{6, 1 << 13} { // a plain sort, then the radix sort
		names := make([]string, size)
		for i := range names {
			names[i] = fmt.Sprintf("%q", fmt.Sprint("n", i))
		}
		names[size-1] = names[2] // a name repeated by the last element...
		names[size/2] = names[1] // ...and one repeated earlier: reported
		tree, err := Parse([]byte("["+strings.Join(names, ",")+"]"), 0)
		if err != nil {
			t.Fatal(err)
		}
		s := &nameSet{}
		for i := range size {
			s.hashed = append(s.hashed, uint64(i+1)) // every name hashes to 0
		}
		if key, ok := s.first(tree); !ok || key != uint32(size/2+1) {
			t.Errorf("size %d: first = %d, %v; want %d", size, key, ok, size/2+1)
		}
		s.hashed = s.hashed[:size/2]
		if key, ok := s.first(tree); ok {
			t.Errorf("size %d: distinct names reported as repeated (%d)", size, key)
		}
	}
}

// parseChecked is Parse(src, maxDepth), after failing t unless Check gives
// the same verdict: the same error, at the same offset, with the same
// pointer and kind.
func parseChecked(t *testing.T, src []byte, maxDepth int) (*Tree, error) {
	t.Helper()
	tree, err := Parse(src, maxDepth)
	if cerr := Check(src, maxDepth); !reflect.DeepEqual(cerr, err) {
		t.Errorf("%.60q: Check: %#v, Parse: %#v", src, cerr, err)
	}
	return tree, err
}

// TestCheckReusesItsMemory: the parser of Check, emptied by release after
// each document, checks the next one without allocating, and gives each
// the verdict a fresh parser gives, after documents of any size and
// shape; what it keeps after a huge one is bounded.
func TestCheckReusesItsMemory(t *testing.T) {
	manifest := []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",` +
		`"config":{"mediaType":"application/vnd.example+json","digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2},` +
		`"layers":[{"mediaType":"application/vnd.example.layer","digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2}],` +
		`"annotations":{"a":"\u00e9","b":"x"}}`)
	var large strings.Builder
	large.WriteString(`{"deep":` + strings.Repeat(`[{"a":1,"b":[]},`, 60) + "0" + strings.Repeat("]", 60) + `,"wide":{`)
	for i := range 3 * keptEntries {
		fmt.Fprintf(&large, `"k\u00e9%d%s":[%d,{"x":null}],`, i, strings.Repeat("n", 2*keptEntries*(i%2)), i)
	}
	large.WriteString(`"end":0}}`)
	p := &parser{t: &Tree{reused: true}}
	for _, doc := range [][]byte{
		manifest, []byte(large.String()), []byte(`{"a":1,"a":2}`), manifest, []byte(`[1,]`), []byte(large.String()[:large.Len()-1]),
		[]byte(`{"x":{"y":{"k":1,"k":2}}}`), []byte(large.String()), []byte("\"\xff\""), manifest,
	} {
		_, want := Parse(doc, 0)
		err := p.parse(doc, 0)
		p.release()
		if !reflect.DeepEqual(err, want) {
			t.Errorf("%.40q: %v, want %v", doc, err, want)
		}
		if len(p.t.chunks) > keptChunks || cap(p.path) > keptEntries || p.src != nil || p.t.src != nil {
			t.Errorf("%.40q: kept %d chunks, a path of %d, the source: %v", doc, len(p.t.chunks), cap(p.path), p.src != nil)
		}
		for depth, s := range p.names {
			if cap(s.hashed) > keptEntries || cap(s.a) > keptEntries || cap(s.b) > keptEntries {
				t.Errorf("%.40q: depth %d keeps %d hashes, %d and %d bytes of names", doc, depth, cap(s.hashed), cap(s.a), cap(s.b))
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() {
		if err := p.parse(manifest, 0); err != nil {
			t.Fatal(err)
		}
		p.release()
	}); n != 0 {
		t.Errorf("checking a manifest again allocates %v times", n)
	}
	if err := Check(bytes.Repeat([]byte(" "), maxSource), 0); err != ErrTooLarge {
		t.Errorf("Check of 256 MiB: %v", err)
	}
}

// TestSmallDocumentSmallTable: a document has no more nodes than bytes, so
// a small one (a plugin.json) gets a node table of its own size, not a
// whole 48 KB chunk; one past a chunk still parses.
func TestSmallDocumentSmallTable(t *testing.T) {
	small := []byte(`{"name":"demo","version":"1.0.0","skills":["a","b"],"x":[1,2,[3,{}]]}`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const runs = 100
	for range runs {
		if _, err := Parse(small, 64); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 4<<10 {
		t.Errorf("parsing %d bytes allocates %d bytes", len(small), per)
	}
	// Densest documents: one node per byte or two, across chunk bounds.
	for _, n := range []int{1, 2, 4095, 4096, 4097, 10000} {
		doc := "[" + strings.Repeat("1,", n) + "1]"
		tree, err := Parse([]byte(doc), 64)
		if err != nil || tree.Root().Len() != n+1 {
			t.Fatalf("%d elements: %v", n+1, err)
		}
	}
	if _, err := Parse([]byte("1"), 64); err != nil {
		t.Fatal(err)
	}
}

// TestNamesShareOneAllocation: Names decodes names as Member.Name does,
// escapes included, and the names of a wide object cost one allocation
// in all, not one each.
func TestNamesShareOneAllocation(t *testing.T) {
	src := []byte(`{"plain":1,"esc\u00e9\n":2,"":3,"\ud83d\ude00x":4}`)
	tr, err := Parse(src, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := NewNames(tr.Root())
	for m := range tr.Root().Members() {
		if got, want := names.Name(m.Key), m.Name(); got != want {
			t.Errorf("Names.Name = %q, Member.Name = %q", got, want)
		}
	}

	var b bytes.Buffer
	b.WriteByte('{')
	for i := range 10000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"field%d":0`, i)
	}
	b.WriteByte('}')
	wide, err := Parse(b.Bytes(), 0)
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(5, func() {
		names := NewNames(wide.Root())
		for m := range wide.Root().Members() {
			names.Name(m.Key)
		}
	})
	if allocs > 4 {
		t.Errorf("10,000 names took %.0f allocations, want a few", allocs)
	}
}
