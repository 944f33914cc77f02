package skill

import (
	"fmt"
	"strings"
	"testing"
)

// want is a Problem without its message, which is free to change.
type want struct {
	Severity     Severity
	Code, Key    string
	Line, Column int
}

func (w want) String() string {
	return fmt.Sprintf("%s %s %q %d:%d", w.Severity, w.Code, w.Key, w.Line, w.Column)
}

func wantsOf(problems []Problem) []want {
	out := make([]want, 0, len(problems))
	for _, p := range problems {
		out = append(out, want{p.Severity, p.Code, p.Key, p.Line, p.Column})
	}
	return out
}

// parseCase is one SKILL.md and everything Parse must say about it.
type parseCase struct {
	name    string
	content string
	dir     string // "" means "demo"
	strict  bool
	want    []want // exact problems, in order
	check   func(t *testing.T, s *Skill)
}

// doc builds a SKILL.md from frontmatter lines and a body.
func doc(frontmatter ...string) string {
	return "---\n" + strings.Join(frontmatter, "\n") + "\n---\nBody\n"
}

func runParseCases(t *testing.T, cases []parseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir
			if dir == "" {
				dir = "demo"
			}
			s, problems := Parse([]byte(tc.content), dir, Options{Strict: tc.strict})
			got := wantsOf(problems)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("problems:\n got  %v\n want %v\nmessages: %v", got, tc.want, messages(problems))
			}
			for _, p := range problems {
				if p.Message == "" {
					t.Errorf("problem %s has no message", p.Code)
				}
			}
			if hasError(problems) != (s == nil) {
				t.Fatalf("skill = %v with problems %v: a skill must be returned exactly when there is no error", s, got)
			}
			if tc.check != nil {
				tc.check(t, s)
			}
		})
	}
}

func messages(problems []Problem) []string {
	var out []string
	for _, p := range problems {
		out = append(out, p.Message)
	}
	return out
}

func errAt(code, key string, line, col int) want  { return want{Error, code, key, line, col} }
func warnAt(code, key string, line, col int) want { return want{Warning, code, key, line, col} }
