package build

import (
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// FuzzAnnotationEscape: escaped workflow-command values hold none of the
// characters GitHub reserves, and unescaping gives back the input.
func FuzzAnnotationEscape(f *testing.F) {
	for _, s := range []string{"", "a:b,c", "100%", "x\r\ny", "%0A", "skills/a,b/SKILL.md"} {
		f.Add(s)
	}
	unescape := strings.NewReplacer("%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%")
	f.Fuzz(func(t *testing.T, s string) {
		p := escapeProperty(s)
		if strings.ContainsAny(p, "\r\n:,") || unescape.Replace(p) != s {
			t.Fatalf("escapeProperty(%q) = %q", s, p)
		}
		d := escapeData(s)
		if strings.ContainsAny(d, "\r\n") || unescape.Replace(d) != s {
			t.Fatalf("escapeData(%q) = %q", s, d)
		}
	})
}

// FuzzUTF16Column: the locator's column is what UTF-16 encoding the line's
// prefix gives, for any content, line and byte column.
func FuzzUTF16Column(f *testing.F) {
	f.Add([]byte("a\né😀x\n"), 2, 7)
	f.Add([]byte("\xff\xfeab"), 1, 3)
	f.Add([]byte(""), 1, 1)
	f.Add([]byte("x\n\ny"), 3, 2)
	f.Fuzz(func(t *testing.T, content []byte, line, col int) {
		if line < 1 || col < 1 {
			return
		}
		l, _ := newLocator("/")
		r := &ValidateReport{}
		got := l.utf16Column(r, "f", content, line, col)
		lines := strings.SplitAfter(string(content), "\n")
		if line > len(lines) || col-1 > len(content)-len(strings.Join(lines[:line-1], "")) {
			if got != col {
				t.Fatalf("out of range: got %d, want %d unchanged", got, col)
			}
			return
		}
		prefix := []byte(strings.Join(lines[:line-1], ""))
		seg := content[len(prefix) : len(prefix)+col-1]
		want := 1
		for len(seg) > 0 {
			r, n := utf8.DecodeRune(seg)
			want += len(utf16.Encode([]rune{r}))
			seg = seg[n:]
		}
		if got != want {
			t.Fatalf("line %d col %d of %q: got %d, want %d", line, col, content, got, want)
		}
	})
}
