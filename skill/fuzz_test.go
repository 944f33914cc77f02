package skill

import (
	"strings"
	"testing"
	"unicode/utf8"
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
