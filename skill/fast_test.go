package skill

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// sameNode reports where a and b differ in what the checks read: kind,
// value, line, column and children.
func sameNode(a, b *yaml.Node, path string) string {
	switch {
	case a.Kind != b.Kind:
		return fmt.Sprintf("%s: kind %v, yaml.v3 %v", path, a.Kind, b.Kind)
	case a.Value != b.Value:
		return fmt.Sprintf("%s: value %q, yaml.v3 %q", path, a.Value, b.Value)
	case a.Line != b.Line || a.Column != b.Column:
		return fmt.Sprintf("%s: at %d:%d, yaml.v3 %d:%d", path, a.Line, a.Column, b.Line, b.Column)
	case len(a.Content) != len(b.Content):
		return fmt.Sprintf("%s: %d children, yaml.v3 %d", path, len(a.Content), len(b.Content))
	}
	for i := range a.Content {
		if d := sameNode(a.Content[i], b.Content[i], fmt.Sprintf("%s/%d", path, i)); d != "" {
			return d
		}
	}
	return ""
}

// checkFastPath holds fastMapping to yaml.v3 on one frontmatter, and Parse
// with the fast path to Parse without it on the whole SKILL.md. It reports
// whether the fast path read the frontmatter.
func checkFastPath(t *testing.T, frontmatter string) bool {
	t.Helper()
	fast, arena, ok := fastMapping([]byte(frontmatter))
	if ok {
		defer arena.release()
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(frontmatter), &doc); err != nil {
			t.Fatalf("fast path read what yaml.v3 refuses (%v):\n%s", err, frontmatter)
		}
		if len(doc.Content) != 1 {
			t.Fatalf("fast path read an empty document:\n%s", frontmatter)
		}
		if d := sameNode(fast, doc.Content[0], ""); d != "" {
			t.Fatalf("fast path differs from yaml.v3: %s\n%q", d, frontmatter)
		}
	}
	content := []byte("---\n" + frontmatter + "---\nBody\n")
	for _, strict := range []bool{false, true} {
		s1, p1 := Parse(content, "demo", Options{Strict: strict})
		fastPath = false
		s2, p2 := Parse(content, "demo", Options{Strict: strict})
		fastPath = true
		if !reflect.DeepEqual(p1, p2) {
			t.Fatalf("problems differ:\nfast %v\nyaml %v\n%q", p1, p2, frontmatter)
		}
		if !reflect.DeepEqual(s1, s2) {
			t.Fatalf("skills differ:\nfast %#v\nyaml %#v\n%q", s1, s2, frontmatter)
		}
	}
	return ok
}

var (
	fastKeys = []string{"name", "description", "license", "compatibility", "allowed-tools", "metadata", "x-owner",
		"x_1", "a.b", "1", "true", "Name", "-x", "<<", "k k", `"name"`, "'q'", "?x", "a:b", "é", "k\t"}
	fastValues = []string{"demo", "Does things. Use when asked.", "demo", "d", "", " ", "   spaced   ", "a: b", "a:b", "C# code",
		"x #comment", "x#y", "é ü — ok", "日本語", "emoji 😀", "true", "1.0", "007", "~", "null", "a ' b", `a " b`,
		"[x]", "{a: b}", "a [b] {c}", "a,b", "- x", "-5", "*alias", "&anchor v", "!tag v", "|", ">", "%x", "@x", "`x",
		"x:", "x: ", "tab\tinside", "a\u2028b", "a\u0085b", "a\ufeffb", "---", "...", "a --- b", "#x", ":x", "?x", "x?",
		`"q"`, `"with: colon # hash"`, `'single'`, `'it''s'`, `"esc\n"`, `"unterminated`, `"x" trailing`, `"x" # c`,
		`""`, `''`, `"a'b"`, `'a"b'`, "\x7f", "a\x01b", "\xff", "ok   ", "'x'   ", "Bash(python:*) Read",
		"Requires Python 3.14+ and uv", "MIT", "Apache-2.0", "v1.0.0", "http://x.example/a?b=c#d", "a | b", "a > b", "a & b", "a * b", "a ! b"}
	fastIndents = []string{"  ", "  ", "    ", " ", "\t"}
)

// genFrontmatter writes a frontmatter from the pools: mostly ordinary,
// often with one near miss.
func genFrontmatter(r *rand.Rand) string {
	var b strings.Builder
	eol := "\n"
	if r.IntN(6) == 0 {
		eol = "\r\n"
	}
	pick := func(pool []string) string {
		if r.IntN(12) == 0 {
			return pool[r.IntN(len(pool))]
		}
		return pool[r.IntN(min(len(pool), 7))]
	}
	for range 1 + r.IntN(7) {
		switch r.IntN(30) {
		case 0:
			b.WriteString("# a comment" + eol)
		case 1:
			b.WriteString(eol)
		case 2:
			b.WriteString("  # indented comment" + eol)
		case 3, 4, 5, 6:
			indent := pick(fastIndents)
			b.WriteString(pick(fastKeys) + ":" + eol)
			for range r.IntN(4) {
				switch r.IntN(24) {
				case 0:
					b.WriteString(indent + "  deeper: x" + eol)
				case 1:
					b.WriteString(" " + indent + "odd: x" + eol)
				case 2:
					b.WriteString("# between" + eol)
				case 3:
					b.WriteString(indent + "- item" + eol)
				default:
					b.WriteString(indent + pick(fastKeys[6:]) + ": " + pick(fastValues) + eol)
				}
			}
		case 7:
			b.WriteString(pick(fastKeys) + ": " + pick(fastValues) + eol + "  continued" + eol)
		default:
			sep := ": "
			if r.IntN(20) == 0 {
				sep = []string{":", ":  ", " : ", ":\t"}[r.IntN(4)]
			}
			b.WriteString(pick(fastKeys) + sep + pick(fastValues) + eol)
		}
	}
	return b.String()
}

// TestFastPathDifferential is issue 15, item 2: the fast path for plain
// frontmatter gives exactly what the YAML parser gives, on thousands of
// generated frontmatters (5,000 under the race detector or -short), most
// ordinary and many near misses.
func TestFastPathDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	fast := 0
	n := 20000
	if testing.Short() || raceEnabled {
		n = 5000
	}
	for range n {
		if checkFastPath(t, genFrontmatter(r)) {
			fast++
		}
	}
	t.Logf("%d of %d frontmatters took the fast path", fast, n)
	if fast < n/5 || fast > n*4/5 {
		t.Errorf("the generator is lopsided: %d of %d took the fast path", fast, n)
	}
}

// TestFastPathTypical: the frontmatters skills are written with take the
// fast path.
func TestFastPathTypical(t *testing.T) {
	for _, fm := range []string{
		"name: demo\ndescription: Does demo things.\n",
		"name: pdf-processing\ndescription: Extract PDF text, fill forms. Use when handling PDFs.\nlicense: Apache-2.0\n" +
			"compatibility: Requires Python 3.14+ and uv\nallowed-tools: Bash(python:*) Read Write\nmetadata:\n  author: example-org\n  version: \"1.0\"\n",
		"# generated\nname: demo\r\ndescription: 'Quoted: with a colon'\r\n\r\nmetadata:\r\n    a: b\r\n",
	} {
		if !checkFastPath(t, fm) {
			t.Errorf("slow path for a typical frontmatter:\n%s", fm)
		}
	}
}

// FuzzFastPath holds the fast path to the YAML parser on any input.
func FuzzFastPath(f *testing.F) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 20 {
		f.Add(genFrontmatter(r))
	}
	f.Add("name: demo\ndescription: d\nmetadata:\n  a: b\n")
	f.Fuzz(func(t *testing.T, frontmatter string) {
		checkFastPath(t, frontmatter)
	})
}

// TestFastArenaReleased: whatever the fast path read, or gave up on
// halfway (a nested mapping whose last value is a list, the YAML parser's
// to read), nothing of it stays reachable from the recycled arena, and the
// next frontmatter reads the same in a used arena as in a new one.
func TestFastArenaReleased(t *testing.T) {
	a := new(fastArena)
	for _, fm := range []string{
		"name: demo\ndescription: d\nmetadata:\n  a: b\n  c: d\n",
		"name: demo\nmetadata:\n  a: b\n  c: [x]\n",
		"metadata:\n  a: b\n  c: d\n  e: f\nname: x\nother: |\n  block\n",
		"name: demo\n",
	} {
		root, ok := a.read([]byte(fm))
		var doc yaml.Node
		if ok {
			if err := yaml.Unmarshal([]byte(fm), &doc); err != nil {
				t.Fatal(err)
			}
			if d := sameNode(root, doc.Content[0], ""); d != "" {
				t.Errorf("in a used arena, the fast path differs from yaml.v3: %s\n%s", d, fm)
			}
		}
		a.release()
		for i, n := range a.nodes[:cap(a.nodes)] {
			if !reflect.ValueOf(n).IsZero() {
				t.Fatalf("after %q: node %d kept: %+v", fm, i, n)
			}
		}
		for i, c := range a.children[:cap(a.children)] {
			if c != nil {
				t.Fatalf("after %q: child %d kept", fm, i)
			}
		}
	}
}

// TestPlainLineEveryByte: whichever byte a line holds, at whichever
// position of the eight read together (or in the tail read one by one),
// plainLine takes the line exactly when the byte is printable ASCII (a
// lone byte of 0x80 or more is not UTF-8); two bytes out of range in one
// word are caught as well as one.
func TestPlainLineEveryByte(t *testing.T) {
	for c := range 256 {
		want := c >= 0x20 && c < 0x7F
		for pos := range 19 {
			line := []byte(strings.Repeat("a", 19))
			line[pos] = byte(c)
			if got := plainLine(line); got != want {
				t.Fatalf("byte %#x at %d: plainLine %v, want %v", c, pos, got, want)
			}
			line[(pos+3)%19] = 0x1F
			if plainLine(line) {
				t.Fatalf("bytes %#x and 0x1f: taken", c)
			}
		}
	}
}
