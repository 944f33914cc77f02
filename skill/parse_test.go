package skill

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestParseMinimal(t *testing.T) {
	s, problems := Parse([]byte(doc("name: demo", "description: Does demo things.")), "demo", Options{})
	if s == nil || len(problems) != 0 {
		t.Fatalf("Parse = %v, %v", s, problems)
	}
	if s.Name != "demo" || s.Description != "Does demo things." || s.Body != "Body\n" {
		t.Errorf("skill = %+v", s)
	}
}

func TestSpec71_FrontmatterDelimiters(t *testing.T) {
	const fm = "name: demo\ndescription: d\n"
	runParseCases(t, []parseCase{
		{name: "LF", content: "---\n" + fm + "---\nBody\n",
			check: func(t *testing.T, s *Skill) { equal(t, s.Body, "Body\n") }},
		{name: "CRLF", content: "---\r\nname: demo\r\ndescription: d\r\n---\r\nBody\r\n",
			check: func(t *testing.T, s *Skill) { equal(t, s.Description, "d"); equal(t, s.Body, "Body\r\n") }},
		{name: "closing at end of file", content: "---\n" + fm + "---",
			check: func(t *testing.T, s *Skill) { equal(t, s.Body, "") }},
		{name: "trailing blanks on delimiters", content: "--- \t\n" + fm + "---  \nBody",
			check: func(t *testing.T, s *Skill) { equal(t, s.Body, "Body") }},
		{name: "body kept verbatim", content: "---\n" + fm + "---\n\n# Title\n---\nmore: yaml-looking\n",
			check: func(t *testing.T, s *Skill) { equal(t, s.Body, "\n# Title\n---\nmore: yaml-looking\n") }},
		{name: "dashes inside a value do not close", content: "---\nname: demo\ndescription: a --- b\n---\n",
			check: func(t *testing.T, s *Skill) { equal(t, s.Description, "a --- b") }},
		{name: "four dashes do not close", content: "---\nname: demo\ndescription: d\n----\n",
			want: []want{errAt("skill-frontmatter-unterminated", "", 1, 1)}},
		{name: "indented dashes do not close", content: "---\nname: demo\ndescription: |\n  x\n  ---\n",
			want: []want{errAt("skill-frontmatter-unterminated", "", 1, 1)}},
		{name: "empty file", content: "",
			want: []want{errAt("skill-frontmatter-missing", "", 1, 1)}},
		{name: "no frontmatter", content: "# Title\n",
			want: []want{errAt("skill-frontmatter-missing", "", 1, 1)}},
		{name: "blank line before", content: "\n---\n" + fm + "---\n",
			want: []want{errAt("skill-frontmatter-missing", "", 1, 1)}},
		{name: "leading space", content: " ---\n" + fm + "---\n",
			want: []want{errAt("skill-frontmatter-missing", "", 1, 1)}},
		{name: "text after opening dashes", content: "--- name: demo\n---\n",
			want: []want{errAt("skill-frontmatter-missing", "", 1, 1)}},
		{name: "opening only, no newline", content: "---",
			want: []want{errAt("skill-frontmatter-unterminated", "", 1, 1)}},
		{name: "unterminated", content: "---\n" + fm,
			want: []want{errAt("skill-frontmatter-unterminated", "", 1, 1)}},
		{name: "dots do not close", content: "---\n" + fm + "...\n",
			want: []want{errAt("skill-frontmatter-unterminated", "", 1, 1)}},
		{name: "empty frontmatter", content: "---\n---\nBody",
			want: []want{errAt("skill-yaml-not-mapping", "", 1, 1)}},
		{name: "comment-only frontmatter", content: "---\n# nothing\n---\n",
			want: []want{errAt("skill-yaml-not-mapping", "", 1, 1)}},
	})
}

// A BOM is accepted and stripped with a warning (see the package doc).
func TestBOM(t *testing.T) {
	runParseCases(t, []parseCase{
		{name: "BOM then frontmatter", content: "\uFEFF" + doc("name: demo", "description: d"),
			want: []want{warnAt("skill-bom-stripped", "", 1, 1)},
			check: func(t *testing.T, s *Skill) {
				equal(t, s.Name, "demo")
				if !strings.HasPrefix(string(s.Raw), "\uFEFF") {
					t.Error("Raw lost the BOM")
				}
			}},
		{name: "BOM keeps positions", content: "\uFEFF" + doc("name: Demo", "description: d"),
			want: []want{warnAt("skill-bom-stripped", "", 1, 1), errAt("skill-name-invalid", "/name", 2, 7)}},
		{name: "BOM without frontmatter", content: "\uFEFF# Title",
			want: []want{warnAt("skill-bom-stripped", "", 1, 1), errAt("skill-frontmatter-missing", "", 1, 1)}},
		{name: "two BOMs", content: "\uFEFF\uFEFF" + doc("name: demo", "description: d"),
			want: []want{warnAt("skill-bom-stripped", "", 1, 1), errAt("skill-frontmatter-missing", "", 1, 1)}},
	})
}

func TestFrontmatterTooLarge(t *testing.T) {
	big := "x: " + strings.Repeat("a", DefaultMaxFrontmatterBytes) + "\n"
	runParseCases(t, []parseCase{
		{name: "closed", content: doc("name: demo", "description: d", big),
			want: []want{errAt("skill-frontmatter-too-large", "", 1, 1)}},
		{name: "never closed", content: "---\n" + strings.Repeat("a: b\n", DefaultMaxFrontmatterBytes),
			want: []want{errAt("skill-frontmatter-too-large", "", 1, 1)}},
		{name: "just under the limit", content: doc("name: demo", "description: d", "x: "+strings.Repeat("a", DefaultMaxFrontmatterBytes-30)),
			want: []want{warnAt("skill-unknown-field", "/x", 4, 1)}},
	})
}

func TestYAMLStructure(t *testing.T) {
	runParseCases(t, []parseCase{
		{name: "unclosed flow list", content: doc("name: demo", "description: [unclosed"),
			want: []want{errAt("skill-yaml-invalid", "", 3, 0)}},
		{name: "list item after a mapping", content: doc("name: demo", "description: d", "- x"),
			want: []want{errAt("skill-yaml-invalid", "", 4, 0)}},
		{name: "colon in a plain value", content: doc("name: demo", "description: a: b"),
			want: []want{errAt("skill-yaml-invalid", "", 3, 0)}},
		{name: "bad indentation", content: doc("name: demo", "  description: d", "x"),
			want: []want{errAt("skill-yaml-invalid", "", 3, 0)}},
		{name: "tab indentation", content: doc("metadata:", "\ta: b"),
			want: []want{errAt("skill-yaml-invalid", "", 3, 0)}},
		// The scanner's "did not find expected" errors count lines from
		// 1, the parser's from 0: each is placed on its own line.
		{name: "anchor without a name", content: doc("name: demo", "description: &"),
			want: []want{errAt("skill-yaml-invalid", "", 3, 0)}},
		{name: "bad hexadecimal escape", content: doc("name: demo", `description: "\xZZ"`),
			want: []want{errAt("skill-yaml-invalid", "", 3, 0)}},
		{name: "tag without its closing bracket", content: doc("name: demo", "description: !<x", "a: b"),
			want: []want{errAt("skill-yaml-invalid", "", 3, 0)}},
		{name: "unclosed flow list before a key", content: doc("name: demo", "description: d", "x: [a, b", "y: c"),
			want: []want{errAt("skill-yaml-invalid", "", 4, 0)}},
		{name: "list item where a key is expected", content: doc("name: demo", "metadata:", "  a: b", " - c"),
			want: []want{errAt("skill-yaml-invalid", "", 5, 0)}},
		{name: "invalid UTF-8", content: doc("name: demo", "description: \xff"),
			want: []want{errAt("skill-yaml-invalid", "", 0, 0)}},
		{name: "list", content: doc("- name: demo"),
			want: []want{errAt("skill-yaml-not-mapping", "", 2, 1)}},
		{name: "scalar", content: doc("just text"),
			want: []want{errAt("skill-yaml-not-mapping", "", 2, 1)}},
		{name: "duplicate top-level key", content: doc("name: demo", "description: d", "name: demo"),
			want: []want{errAt("skill-yaml-duplicate-key", "/name", 4, 1)}},
		{name: "duplicate metadata key", content: doc("name: demo", "description: d", "metadata:", "  a: x", "  a: y"),
			want: []want{errAt("skill-yaml-duplicate-key", "/metadata/a", 6, 3)}},
		{name: "duplicate key in an unknown field", content: doc("name: demo", "description: d", "x: {a: 1, a: 2}"),
			want: []want{errAt("skill-yaml-duplicate-key", "/x/a", 4, 11), warnAt("skill-unknown-field", "/x", 4, 1)}},
		// Up to fewKeys keys are compared one by one, more go through a
		// map: both find the same repeats, aliased keys included.
		{name: "duplicate key among few, through an alias", content: doc("name: demo", "description: d", "metadata:", "  &k a: x", "  b: y", "  *k : z"),
			want: []want{errAt("skill-yaml-duplicate-key", "/metadata/a", 7, 3)}},
		{name: "duplicate keys among many", content: doc(slices.Concat([]string{"name: demo", "description: d", "metadata:", "  &k a: x", "  b: y", "  b: y"},
			manyKeys(20), []string{"  *k : z"})...),
			want: []want{errAt("skill-yaml-duplicate-key", "/metadata/b", 7, 3), errAt("skill-yaml-duplicate-key", "/metadata/a", 28, 3)}},
		{name: "duplicates differ only by quoting", content: doc("name: demo", "description: d", `"name": demo`),
			want: []want{errAt("skill-yaml-duplicate-key", "/name", 4, 1)}},
		{name: "list as key", content: doc("name: demo", "description: d", "? [a]", ": b"),
			want: []want{errAt("skill-key-invalid", "", 4, 3)}},
		{name: "mapping as metadata key", content: doc("name: demo", "description: d", "metadata:", "  ? {a: b}", "  : c"),
			want: []want{errAt("skill-key-invalid", "/metadata", 5, 5)}},
		{name: "aliases are expanded", content: doc("name: &n demo", "description: *n", "x: {a: *n}"),
			want: []want{warnAt("skill-unknown-field", "/x", 4, 1)},
			check: func(t *testing.T, s *Skill) {
				equal(t, s.Description, "demo")
				if !reflect.DeepEqual(s.Frontmatter["x"], map[string]any{"a": "demo"}) {
					t.Errorf("x = %#v", s.Frontmatter["x"])
				}
			}},
		{name: "undefined alias", content: doc("name: demo", "description: *nope"),
			want: []want{errAt("skill-yaml-invalid", "", 0, 0)}},
		{name: "alias inside its own anchor", content: doc("name: demo", "description: d", "x: &a [*a]"),
			want: []want{errAt("skill-yaml-invalid", "/x/0", 4, 8), warnAt("skill-unknown-field", "/x", 4, 1)}},
		{name: "key with slash and tilde", content: doc("name: demo", "description: d", "a/b~c: 1"),
			want: []want{warnAt("skill-unknown-field", "/a~1b~0c", 4, 1)}},
	})
}

// TestImplicitKeyLength: YAML limits an implicit key (one not introduced
// by "?") to 1,024 characters, quotes included, and yaml.v3 refuses a
// longer one. Whether it is a top-level key, a metadata key or a key of a
// flow mapping, quoted or not, in ASCII or not (the limit counts
// characters, not bytes), the verdict is the YAML parser's: a key at the
// limit loads, one character more is skill-yaml-invalid and the skill is
// skipped, by Parse as by LoadDir.
func TestImplicitKeyLength(t *testing.T) {
	key := func(n int) string { return strings.Repeat("k", n) }
	wide := strings.Repeat("é", 1024)
	cases := []parseCase{
		{name: "top-level key at the limit", content: doc("name: demo", "description: d", key(1024)+": v"),
			want: []want{warnAt("skill-unknown-field", "/"+key(1024), 4, 1)}},
		{name: "top-level key past the limit", content: doc("name: demo", "description: d", key(1025)+": v"),
			want: []want{errAt("skill-yaml-invalid", "", 4, 0)}},
		{name: "key of 1,024 two-byte characters", content: doc("name: demo", "description: d", wide+": v"),
			want: []want{warnAt("skill-unknown-field", "/"+wide, 4, 1)}},
		{name: "key of 1,025 two-byte characters", content: doc("name: demo", "description: d", wide+"é: v"),
			want: []want{errAt("skill-yaml-invalid", "", 4, 0)}},
		{name: "metadata key at the limit", content: doc("name: demo", "description: d", "metadata:", "  "+key(1024)+": v"),
			check: func(t *testing.T, s *Skill) { equal(t, s.Metadata[key(1024)], "v") }},
		{name: "metadata key past the limit", content: doc("name: demo", "description: d", "metadata:", "  "+key(1025)+": v"),
			want: []want{errAt("skill-yaml-invalid", "", 5, 0)}},
		{name: "quoted key at the limit", content: doc("name: demo", "description: d", `"`+key(1022)+`": v`),
			want: []want{warnAt("skill-unknown-field", "/"+key(1022), 4, 1)}},
		{name: "quoted key past the limit", content: doc("name: demo", "description: d", `"`+key(1023)+`": v`),
			want: []want{errAt("skill-yaml-invalid", "", 4, 0)}},
		{name: "flow mapping key at the limit", content: doc("name: demo", "description: d", "x: {"+key(1024)+": v}"),
			want: []want{warnAt("skill-unknown-field", "/x", 4, 1)}},
		{name: "flow mapping key past the limit", content: doc("name: demo", "description: d", "x: {"+key(1025)+": v}"),
			want: []want{errAt("skill-yaml-invalid", "", 4, 0)}},
	}
	runParseCases(t, cases)
	for _, tc := range cases {
		fm, _, _ := strings.Cut(strings.TrimPrefix(tc.content, "---\n"), "---\n")
		var n yaml.Node
		yamlErr := yaml.Unmarshal([]byte(fm), &n)
		invalid := len(tc.want) > 0 && tc.want[0].Code == "skill-yaml-invalid"
		if (yamlErr != nil) != invalid {
			t.Errorf("%s: yaml.v3 says %v", tc.name, yamlErr)
		}
		s, problems, err := LoadDir(writeTree(t, "demo", map[string]string{"SKILL.md": tc.content}), Options{})
		if err != nil || (s == nil) != invalid || fmt.Sprint(wantsOf(problems)) != fmt.Sprint(tc.want) {
			t.Errorf("%s: LoadDir gives skill %v, problems %v, %v", tc.name, s != nil, wantsOf(problems), err)
		}
	}
}

// TestAliasBomb checks that a "billion laughs" frontmatter is refused
// quickly instead of being expanded.
func TestAliasBomb(t *testing.T) {
	lines := []string{"name: demo", "description: d", `a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]`}
	for i := 1; i < 10; i++ {
		prev := "*a" + string(rune('0'+i-1))
		lines = append(lines, "a"+string(rune('0'+i))+": &a"+string(rune('0'+i))+" ["+strings.Repeat(prev+",", 8)+prev+"]")
	}
	s, problems := Parse([]byte(doc(lines...)), "demo", Options{})
	if s != nil {
		t.Fatal("the alias bomb was accepted")
	}
	var found bool
	for _, p := range problems {
		found = found || p.Code == "skill-frontmatter-too-complex"
	}
	if !found {
		t.Fatalf("no skill-frontmatter-too-complex in %v", wantsOf(problems))
	}
}

// manyKeys is the lines of n keys of a metadata mapping, k0 to k(n-1).
func manyKeys(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("  k%d: v", i)
	}
	return lines
}

func equal[T comparable](t *testing.T, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("got %#v, want %#v", got, want)
	}
}
