package skill

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// FuzzParse checks invariants that hold for any input: no panic, a skill
// exactly when no error, every problem fully formed, and a valid skill
// whose fields keep the specification's limits.
func FuzzParse(f *testing.F) {
	f.Add([]byte(doc("name: demo", "description: d")), "demo")
	f.Add([]byte("\uFEFF---\r\nname: demo\r\ndescription: a --- b\r\n---\r\nbody"), "demo")
	f.Add([]byte(doc("name: demo", "description: d", "metadata: {a: 1.0, b: [x]}", "x: &a [*a]")), "demo")
	f.Add([]byte("---\nname: [\n---\n"), "")
	f.Fuzz(func(t *testing.T, content []byte, dir string) {
		s, problems := Parse(content, dir, Options{})
		if hasError(problems) != (s == nil) {
			t.Fatalf("skill %v with problems %v", s, problems)
		}
		for _, p := range problems {
			if p.Code == "" || p.Message == "" || (p.Severity != Error && p.Severity != Warning) || p.Line < 0 || p.Column < 0 {
				t.Fatalf("malformed problem %+v", p)
			}
			if p.Key != "" && !strings.HasPrefix(p.Key, "/") {
				t.Fatalf("key path %q", p.Key)
			}
		}
		if s == nil {
			return
		}
		if why, _ := nameError(s.Name); why != "" || utf8.RuneCountInString(s.Description) > 1024 || strings.TrimSpace(s.Description) == "" {
			t.Fatalf("invalid skill accepted: %+v", s)
		}
		if !strings.HasSuffix(string(content), s.Body) {
			t.Fatalf("body %q is not the end of the file", s.Body)
		}
		Render([]Entry{NewEntry(s, dir)})
	})
}

// FuzzFrontmatter holds Parse to the YAML parser on any frontmatter: the
// frontmatter is skill-yaml-invalid exactly when yaml.v3 refuses it (or
// an alias is used inside its own anchor, which yaml.v3 leaves to the
// decoder), Strict changes severities and nothing else, every position
// lies in the file (a yaml.v3 error's line too, whichever of its scanner
// and parser reported it), and a valid skill holds only the values the
// package doc lists.
func FuzzFrontmatter(f *testing.F) {
	f.Add("name: demo\ndescription: d\n")
	f.Add("name: pdf-processing\ndescription: Extract PDF text. Use when handling PDFs.\nlicense: Apache-2.0\n" +
		"compatibility: Requires Python 3.14+ and uv\nallowed-tools: Bash(python:*) Read Write\nmetadata:\n  author: example-org\n  version: \"1.0\"\n")
	f.Add("# generated\r\nname: demo\r\ndescription: 'Quoted: with a colon'\r\n\r\nmetadata:\r\n    a: b\r\n")
	f.Add("name: demo\ndescription: d\n" + strings.Repeat("k", 1025) + ": v\n")
	f.Add("name: demo\ndescription: d\nmetadata:\n  " + strings.Repeat("é", 1024) + ": v\n")
	f.Add("name: &n demo\ndescription: *n\nx: &a [*a]\nmetadata: {a: [b], c: {d: e}}\n")
	f.Add("name: demo\ndescription: |\n  block\n  text\nx: !!str 1\ny: >-\n  folded\n")
	f.Fuzz(func(t *testing.T, frontmatter string) {
		if !strings.HasSuffix(frontmatter, "\n") {
			frontmatter += "\n"
		}
		content := []byte("---\n" + frontmatter + "---\nBody\n")
		s, problems := Parse(content, "demo", Options{})
		strict, strictProblems := Parse(content, "demo", Options{Strict: true})
		if hasError(problems) != (s == nil) || hasError(strictProblems) != (strict == nil) {
			t.Fatalf("skill %v with problems %v", s, problems)
		}
		if strict != nil && s == nil {
			t.Fatalf("Strict accepts what the default refuses: %v", problems)
		}
		if len(problems) != len(strictProblems) {
			t.Fatalf("Strict changes the problems:\n%v\n%v", wantsOf(problems), wantsOf(strictProblems))
		}
		// YAML breaks lines at CR, NEL, LS and PS as well as LF: a line is
		// at most one past each of them.
		lines := 1
		for _, eol := range []string{"\n", "\r", "\u0085", "\u2028", "\u2029"} {
			lines += strings.Count(string(content), eol)
		}
		for i, p := range problems {
			q := strictProblems[i]
			if p.Code != q.Code || p.Key != q.Key || p.Line != q.Line || p.Column != q.Column ||
				p.Severity != q.Severity && !slices.Contains([]string{"skill-unknown-field", "skill-name-not-ascii", "skill-problems-truncated"}, p.Code) {
				t.Fatalf("Strict changes problem %d: %v, strict %v", i, wantsOf(problems[i:i+1]), wantsOf(strictProblems[i:i+1]))
			}
			if p.Line < 0 || p.Line > lines || p.Column < 0 {
				t.Fatalf("problem outside the file: %+v", p)
			}
		}
		if len(problems) > DefaultMaxProblems+2 {
			t.Fatalf("%d problems", len(problems))
		}
		sp, splitProblems := splitFrontmatter(content, DefaultMaxFrontmatterBytes)
		if hasError(splitProblems) {
			return
		}
		var doc yaml.Node
		yamlErr := yaml.Unmarshal(sp.yaml, &doc)
		invalid := slices.ContainsFunc(problems, func(p Problem) bool {
			return p.Code == "skill-yaml-invalid" && !strings.Contains(p.Message, "inside the node it refers to")
		})
		if (yamlErr != nil) != invalid {
			t.Fatalf("yaml.v3 says %v, Parse %v", yamlErr, wantsOf(problems))
		}
		if s == nil {
			return
		}
		for _, key := range requiredKeys {
			if _, ok := s.Frontmatter[key]; !ok {
				t.Fatalf("valid skill without %s: %#v", key, s.Frontmatter)
			}
		}
		checkValue(t, s.Frontmatter)
		for k, v := range s.Metadata {
			if m, _ := s.Frontmatter["metadata"].(map[string]any); m[k] != v {
				t.Fatalf("Metadata[%q] = %q, Frontmatter has %#v", k, v, m[k])
			}
		}
	})
}

// checkValue fails unless v is a string, or a list or mapping of such
// values, as Skill.Frontmatter promises.
func checkValue(t *testing.T, v any) {
	switch v := v.(type) {
	case string:
	case []any:
		for _, item := range v {
			checkValue(t, item)
		}
	case map[string]any:
		for _, item := range v {
			checkValue(t, item)
		}
	default:
		t.Fatalf("a frontmatter value of type %T", v)
	}
}
