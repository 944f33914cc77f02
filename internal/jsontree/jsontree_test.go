package jsontree

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// toAny converts a tree to the values encoding/json decodes to, so that the
// two parsers can be compared.
func toAny(n *Node) any {
	switch n.Kind {
	case Null:
		return nil
	case Bool:
		return n.Bool
	case Number:
		var f float64
		_ = json.Unmarshal([]byte(n.Str), &f)
		return f
	case String:
		return n.Str
	case Array:
		out := make([]any, len(n.Elems))
		for i, e := range n.Elems {
			out[i] = toAny(e)
		}
		return out
	default:
		out := make(map[string]any, len(n.Members))
		for _, m := range n.Members {
			out[m.Name] = toAny(m.Value)
		}
		return out
	}
}

func TestParseAgreesWithEncodingJSON(t *testing.T) {
	for _, doc := range []string{
		`{}`, `[]`, `null`, `true`, `false`, `0`, `-0.5e+10`, `1E3`, `"a\u00e9\n\"\\\/"`,
		`{"a": [1, {"b": null}], "c": "\ud83d\ude00"}`, " \t\n{ \"a\" : 1 } \r\n", `"\ud800"`, `"\udc00\ud800x"`,
	} {
		n, err := Parse([]byte(doc), 0)
		if err != nil {
			t.Errorf("%q: %v", doc, err)
			continue
		}
		var want any
		if err := json.Unmarshal([]byte(doc), &want); err != nil {
			t.Fatal(err)
		}
		if got := toAny(n); !reflect.DeepEqual(got, want) {
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
		{`"a`, 2, nil}, {"\"a\tb\"", 2, nil}, {`"\x"`, 1, nil}, {`"\u12"`, 1, nil}, {`{} {}`, 3, nil},
		{"\"\xff\"", 1, nil}, {`'a'`, 0, nil}, {`{a: 1}`, 1, nil},
		{`{"a": 1, "a": 2}`, 9, ErrDuplicate},
		{`{"x": {"a": 1, "b": {}, "a": 2}}`, 24, ErrDuplicate},
		{`[[[[1]]]]`, 3, ErrDepth},
	} {
		_, err := Parse([]byte(c.doc), 3)
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
	_, err := Parse([]byte(`{"x": {"a": 1, "a": 2}}`), 0)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Pointer != "/x" {
		t.Errorf("duplicate pointer: %v", err)
	}
}

func TestPositions(t *testing.T) {
	src := []byte("{\n  \"a\": [1,\n    \"x\"],\n  \"b~/c\": true\n}")
	n, err := Parse(src, 0)
	if err != nil {
		t.Fatal(err)
	}
	x := n.Get("a").Elems[1]
	if line, col := LineCol(src, x.Offset); line != 3 || col != 5 || string(x.Raw(src)) != `"x"` {
		t.Errorf("x at %d:%d raw %q", line, col, x.Raw(src))
	}
	if n.Get("missing") != nil || n.Members[1].Name != "b~/c" || EscapePointer("b~/c") != "b~0~1c" {
		t.Error("members or pointer escaping wrong")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2,{"b":null}]}`, `"\ud800\udc00"`, `{"a":1,"a":2}`, `[[[[[[]]]]]]`, `-0.0e-0`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := Parse(b, 0)
		// encoding/json tolerates invalid UTF-8; RFC 8259 and this package do not.
		valid := json.Valid(b) && utf8.Valid(b)
		if err == nil && !valid {
			t.Fatalf("accepted invalid JSON %q", b)
		}
		if err != nil && valid && !errors.Is(err, ErrDuplicate) && !errors.Is(err, ErrDepth) {
			t.Fatalf("refused valid JSON %q: %v", b, err)
		}
		if err == nil && !strings.Contains(string(b), `\u`) {
			var want any
			_ = json.Unmarshal(b, &want)
			if got := toAny(n); !reflect.DeepEqual(got, want) {
				t.Fatalf("%q: got %#v, want %#v", b, got, want)
			}
		}
	})
}
