package skill

import (
	"reflect"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

func TestSpec71_NameRules(t *testing.T) {
	ok := func(name string) func(*testing.T, *Skill) {
		return func(t *testing.T, s *Skill) { equal(t, s.Name, name) }
	}
	long := strings.Repeat("a", MaxNameLength)
	runParseCases(t, []parseCase{
		{name: "letters and digits", content: doc("name: pdf2-tools", "description: d"), dir: "pdf2-tools", check: ok("pdf2-tools")},
		{name: "one character", content: doc("name: a", "description: d"), dir: "a", check: ok("a")},
		{name: "64 characters", content: doc("name: "+long, "description: d"), dir: long, check: ok(long)},
		{name: "digits only", content: doc("name: 42", "description: d"), dir: "42", check: ok("42")},
		{name: "quoted", content: doc(`name: "demo"`, "description: d"), check: ok("demo")},
		{name: "NFKC full-width letters", content: doc("name: ｄｅｍｏ", "description: d"), check: ok("demo")},
		{name: "65 characters", content: doc("name: "+long+"a", "description: d"), dir: long + "a",
			want: []want{errAt("skill-name-invalid", "/name", 2, 7)}},
		{name: "empty", content: doc("name:", "description: d"),
			want: []want{errAt("skill-name-invalid", "/name", 2, 6)}},
		{name: "empty quoted", content: doc(`name: ""`, "description: d"),
			want: []want{errAt("skill-name-invalid", "/name", 2, 7)}},
		{name: "uppercase", content: doc("name: PDF-Processing", "description: d"), dir: "PDF-Processing",
			want: []want{errAt("skill-name-invalid", "/name", 2, 7)}},
		{name: "leading hyphen", content: doc("name: -pdf", "description: d"), dir: "-pdf",
			want: []want{errAt("skill-name-invalid", "/name", 2, 7)}},
		{name: "trailing hyphen", content: doc("name: pdf-", "description: d"), dir: "pdf-",
			want: []want{errAt("skill-name-invalid", "/name", 2, 7)}},
		{name: "lone hyphen", content: doc(`name: "-"`, "description: d"), dir: "-",
			want: []want{errAt("skill-name-invalid", "/name", 2, 7)}},
		{name: "consecutive hyphens", content: doc("name: pdf--processing", "description: d"), dir: "pdf--processing",
			want: []want{errAt("skill-name-invalid", "/name", 2, 7)}},
		{name: "underscore", content: doc("name: pdf_tools", "description: d"), dir: "pdf_tools",
			want: []want{errAt("skill-name-invalid", "/name", 2, 7)}},
		{name: "space", content: doc(`name: "pdf tools"`, "description: d"), dir: "pdf tools",
			want: []want{errAt("skill-name-invalid", "/name", 2, 7)}},
		{name: "surrounding spaces", content: doc(`name: " demo "`, "description: d"),
			want: []want{errAt("skill-name-invalid", "/name", 2, 7)}},
		{name: "uppercase outside ASCII", content: doc("name: cafÉ", "description: d"), dir: "cafÉ",
			want: []want{errAt("skill-name-invalid", "/name", 2, 7)}},
		{name: "titlecase letter", content: doc("name: ǅemo", "description: d"), dir: "ǅemo",
			want: []want{errAt("skill-name-invalid", "/name", 2, 7)}},
		{name: "symbol outside ASCII", content: doc("name: a→b", "description: d"), dir: "a→b",
			want: []want{errAt("skill-name-invalid", "/name", 2, 7)}},
		{name: "combining mark left alone", content: doc("name: a\u0308\u0331x", "description: d"), dir: "a\u0308\u0331x",
			want: []want{errAt("skill-name-invalid", "/name", 2, 7)}},
		{name: "NFKC turns a ligature into ASCII", content: doc("name: ﬁle", "description: d"), dir: "file", check: ok("file")},
		{name: "NFKC makes it too long", content: doc("name: "+strings.Repeat("a", 63)+"ﬁ", "description: d"), dir: strings.Repeat("a", 63) + "fi",
			want: []want{errAt("skill-name-invalid", "/name", 2, 7)}},
		{name: "list", content: doc("name: [demo]", "description: d"),
			want: []want{errAt("skill-name-invalid", "/name", 2, 7)}},
		{name: "mapping", content: doc("name:", "  first: demo", "description: d"),
			want: []want{errAt("skill-name-invalid", "/name", 3, 3)}},
		{name: "missing", content: doc("description: d"),
			want: []want{errAt("skill-name-missing", "/name", 1, 1)}},
	})
}

// TestSkillNamesInOtherScripts: the reference
// validator (skills-ref) accepts, after NFKC, lowercase letters and digits
// of any script, so plugkit does too, with a warning that some hosts
// accept only ASCII names, and an error under Options.Strict.
func TestSkillNamesInOtherScripts(t *testing.T) {
	for _, name := range []string{"技能", "мой-навык", "café", "naïve-2", "δοκιμή", "ǆemo", "١٢٣", "スキル-ｶﾀｶﾅ"} {
		nfkc := norm.NFKC.String(name)
		content := []byte(doc(`name: "`+name+`"`, "description: d"))
		s, problems := Parse(content, name, Options{})
		if s == nil || s.Name != nfkc || len(problems) != 1 || problems[0].Code != "skill-name-not-ascii" || problems[0].Severity != Warning ||
			problems[0].Line != 2 || problems[0].Column != 7 || problems[0].Key != "/name" {
			t.Errorf("%s: skill %v, problems %+v", name, s, problems)
		}
		s, problems = Parse(content, name, Options{Strict: true})
		if s != nil || len(problems) != 1 || problems[0].Code != "skill-name-not-ascii" || problems[0].Severity != Error {
			t.Errorf("%s, strict: skill %v, problems %+v", name, s, problems)
		}
		if _, problems = Parse(content, name+"x", Options{}); len(problems) != 1 || problems[0].Code != "skill-name-mismatch" {
			t.Errorf("%s in another directory: %+v", name, problems)
		}
	}
}

func TestSpec71_NameMatchesDirectory(t *testing.T) {
	runParseCases(t, []parseCase{
		{name: "equal", content: doc("name: deploy", "description: d"), dir: "deploy",
			check: func(t *testing.T, s *Skill) { equal(t, s.Name, "deploy") }},
		{name: "different", content: doc("name: deploy", "description: d"), dir: "deploy2",
			want: []want{errAt("skill-name-mismatch", "/name", 2, 7)}},
		{name: "case differs", content: doc("name: deploy", "description: d"), dir: "Deploy",
			want: []want{errAt("skill-name-mismatch", "/name", 2, 7)}},
		{name: "directory in full-width letters", content: doc("name: deploy", "description: d"), dir: "ｄｅｐｌｏｙ",
			check: func(t *testing.T, s *Skill) { equal(t, s.Name, "deploy") }},
		{name: "directory in decomposed form", content: doc("name: a", "description: d"), dir: "a\u0301",
			want: []want{errAt("skill-name-mismatch", "/name", 2, 7)}},
	})
	// An empty dirName is for content without a directory: no comparison.
	if s, problems := Parse([]byte(doc("name: deploy", "description: d")), "", Options{}); s == nil {
		t.Errorf("empty dirName: %v", wantsOf(problems))
	}
}

func TestSpec71_Description(t *testing.T) {
	max := strings.Repeat("é", 1024) // 2048 bytes: the limit is in characters
	runParseCases(t, []parseCase{
		{name: "1024 characters", content: doc("name: demo", "description: "+max),
			check: func(t *testing.T, s *Skill) { equal(t, s.Description, max) }},
		{name: "one character", content: doc("name: demo", "description: x"),
			check: func(t *testing.T, s *Skill) { equal(t, s.Description, "x") }},
		{name: "block scalar", content: doc("name: demo", "description: |", "  line one", "  line two"),
			check: func(t *testing.T, s *Skill) { equal(t, s.Description, "line one\nline two\n") }},
		{name: "number taken as written", content: doc("name: demo", "description: 1.50"),
			check: func(t *testing.T, s *Skill) { equal(t, s.Description, "1.50") }},
		{name: "1025 characters", content: doc("name: demo", "description: "+max+"x"),
			want: []want{errAt("skill-description-invalid", "/description", 3, 14)}},
		{name: "empty", content: doc("name: demo", "description:"),
			want: []want{errAt("skill-description-invalid", "/description", 3, 13)}},
		{name: "blank", content: doc("name: demo", `description: "  "`),
			want: []want{errAt("skill-description-invalid", "/description", 3, 14)}},
		{name: "list", content: doc("name: demo", "description:", "  - a"),
			want: []want{errAt("skill-description-invalid", "/description", 4, 3)}},
		{name: "mapping", content: doc("name: demo", "description: {a: b}"),
			want: []want{errAt("skill-description-invalid", "/description", 3, 14)}},
		{name: "missing", content: doc("name: demo"),
			want: []want{errAt("skill-description-missing", "/description", 1, 1)}},
		{name: "both missing", content: doc("license: MIT"),
			want: []want{errAt("skill-name-missing", "/name", 1, 1), errAt("skill-description-missing", "/description", 1, 1)}},
	})
}

func TestSpec71_Compatibility(t *testing.T) {
	runParseCases(t, []parseCase{
		{name: "500 characters", content: doc("name: demo", "description: d", "compatibility: "+strings.Repeat("ü", 500)),
			check: func(t *testing.T, s *Skill) { equal(t, len([]rune(s.Compatibility)), 500) }},
		{name: "absent", content: doc("name: demo", "description: d"),
			check: func(t *testing.T, s *Skill) { equal(t, s.Compatibility, "") }},
		{name: "501 characters", content: doc("name: demo", "description: d", "compatibility: "+strings.Repeat("ü", 501)),
			want: []want{errAt("skill-compatibility-invalid", "/compatibility", 4, 16)}},
		{name: "empty", content: doc("name: demo", "description: d", `compatibility: ""`),
			want: []want{errAt("skill-compatibility-invalid", "/compatibility", 4, 16)}},
		{name: "list", content: doc("name: demo", "description: d", "compatibility: [linux]"),
			want: []want{errAt("skill-compatibility-invalid", "/compatibility", 4, 16)}},
	})
}

func TestSpec71_LicenseAndAllowedTools(t *testing.T) {
	runParseCases(t, []parseCase{
		{name: "strings", content: doc("name: demo", "description: d", "license: Apache-2.0", "allowed-tools: Bash(git:*) Read"),
			check: func(t *testing.T, s *Skill) {
				equal(t, s.License, "Apache-2.0")
				equal(t, s.AllowedTools, "Bash(git:*) Read")
			}},
		{name: "scalars as written", content: doc("name: demo", "description: d", "license: 2.0", "allowed-tools: true"),
			check: func(t *testing.T, s *Skill) {
				equal(t, s.License, "2.0")
				equal(t, s.AllowedTools, "true")
			}},
		{name: "empty values", content: doc("name: demo", "description: d", "license:", "allowed-tools:"),
			check: func(t *testing.T, s *Skill) { equal(t, s.License, "") }},
		{name: "license list", content: doc("name: demo", "description: d", "license: [MIT]"),
			want: []want{errAt("skill-license-invalid", "/license", 4, 10)}},
		{name: "allowed-tools list", content: doc("name: demo", "description: d", "allowed-tools:", "  - Read"),
			want: []want{errAt("skill-allowed-tools-invalid", "/allowed-tools", 5, 3)}},
		{name: "allowed-tools mapping", content: doc("name: demo", "description: d", "allowed-tools: {Read: yes}"),
			want: []want{errAt("skill-allowed-tools-invalid", "/allowed-tools", 4, 16)}},
	})
}

func TestSpec71_Metadata(t *testing.T) {
	runParseCases(t, []parseCase{
		{name: "scalars as written", content: doc("name: demo", "description: d", "metadata:",
			`  version: 1.0`, `  quoted: "1.0"`, "  n: 007", "  flag: true", "  none: null", "  empty:", "  hex: 0x1F", "  3: three"),
			check: func(t *testing.T, s *Skill) {
				want := map[string]string{"version": "1.0", "quoted": "1.0", "n": "007", "flag": "true",
					"none": "null", "empty": "", "hex": "0x1F", "3": "three"}
				if !reflect.DeepEqual(s.Metadata, want) {
					t.Errorf("Metadata = %#v", s.Metadata)
				}
			}},
		{name: "empty mapping", content: doc("name: demo", "description: d", "metadata: {}"),
			check: func(t *testing.T, s *Skill) { equal(t, len(s.Metadata), 0) }},
		{name: "absent", content: doc("name: demo", "description: d"),
			check: func(t *testing.T, s *Skill) {
				if s.Metadata != nil {
					t.Errorf("Metadata = %#v", s.Metadata)
				}
			}},
		{name: "nested mapping", content: doc("name: demo", "description: d", "metadata:", "  a: x", "  b:", "    c: d"),
			want: []want{errAt("skill-metadata-invalid", "/metadata/b", 7, 5)}},
		{name: "list value", content: doc("name: demo", "description: d", "metadata:", "  tags: [a, b]"),
			want: []want{errAt("skill-metadata-invalid", "/metadata/tags", 5, 9)}},
		{name: "every bad value reported", content: doc("name: demo", "description: d", "metadata: {a: [], b: {}}"),
			want: []want{errAt("skill-metadata-invalid", "/metadata/a", 4, 15), errAt("skill-metadata-invalid", "/metadata/b", 4, 22)}},
		{name: "list", content: doc("name: demo", "description: d", "metadata: [a]"),
			want: []want{errAt("skill-metadata-invalid", "/metadata", 4, 11)}},
		{name: "scalar", content: doc("name: demo", "description: d", "metadata: v1"),
			want: []want{errAt("skill-metadata-invalid", "/metadata", 4, 11)}},
		{name: "null", content: doc("name: demo", "description: d", "metadata:"),
			want: []want{errAt("skill-metadata-invalid", "/metadata", 4, 10)}},
	})
}

func TestUnknownFields(t *testing.T) {
	content := doc("name: demo", "description: d", "version: 2", "Name: x", "tags: [a, b]")
	runParseCases(t, []parseCase{
		{name: "warning", content: content,
			want: []want{warnAt("skill-unknown-field", "/version", 4, 1), warnAt("skill-unknown-field", "/Name", 5, 1), warnAt("skill-unknown-field", "/tags", 6, 1)},
			check: func(t *testing.T, s *Skill) {
				want := map[string]any{"name": "demo", "description": "d", "version": "2", "Name": "x", "tags": []any{"a", "b"}}
				if !reflect.DeepEqual(s.Frontmatter, want) {
					t.Errorf("Frontmatter = %#v", s.Frontmatter)
				}
			}},
		{name: "strict", content: content, strict: true,
			want: []want{errAt("skill-unknown-field", "/version", 4, 1), errAt("skill-unknown-field", "/Name", 5, 1), errAt("skill-unknown-field", "/tags", 6, 1)}},
		{name: "strict with known keys only", content: doc("name: demo", "description: d", "license: MIT", "compatibility: c",
			"metadata: {a: b}", "allowed-tools: Read"), strict: true},
	})
}

func TestFrontmatterKeepsEveryKey(t *testing.T) {
	s, _ := Parse([]byte(doc("name: demo", "description: d", "metadata:", "  v: 1.0", "x:", "  - {k: [1, ~]}")), "demo", Options{})
	want := map[string]any{"name": "demo", "description": "d",
		"metadata": map[string]any{"v": "1.0"},
		"x":        []any{map[string]any{"k": []any{"1", "~"}}}}
	if !reflect.DeepEqual(s.Frontmatter, want) {
		t.Errorf("Frontmatter = %#v", s.Frontmatter)
	}
}

// TestProblemsInSourceOrder checks that every problem is reported, not
// only the first, and in the order of the file.
func TestProblemsInSourceOrder(t *testing.T) {
	runParseCases(t, []parseCase{
		{name: "many", content: doc("extra: 1", "name: Bad", "compatibility: []", "metadata: {a: {}}"),
			want: []want{
				warnAt("skill-unknown-field", "/extra", 2, 1),
				errAt("skill-name-invalid", "/name", 3, 7),
				errAt("skill-compatibility-invalid", "/compatibility", 4, 16),
				errAt("skill-metadata-invalid", "/metadata/a", 5, 15),
				errAt("skill-description-missing", "/description", 1, 1),
			}},
	})
}
