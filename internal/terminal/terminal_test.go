package terminal

import (
	"fmt"
	"strings"
	"testing"
)

func TestSafe(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"release-notes", "release-notes"},
		{"café 技能 мой-навык", "café 技能 мой-навык"},
		{"", ""},
		{"a\x1b[2Jb", `a\x1b[2Jb`},               // clear screen
		{"\x1b]0;pwned\x07", `\x1b]0;pwned\x07`}, // window title
		{"line1\nline2\r\tx", `line1\nline2\r\tx`},
		{"del\x7f", `del\x7f`},
		{"c1\u009b31m", `c1\x9b31m`}, // 8-bit CSI
		{"bidi\u202eevil\u2066", `bidi\u202eevil\u2066`},
		{"bad\xffutf8\xc3", `bad\xffutf8\xc3`},
	} {
		if got := Safe(c.in); got != c.want {
			t.Errorf("Safe(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestSafeIdempotentOnOutput: what Safe returns is itself safe, so printing
// it twice never changes it again.
func TestSafeIdempotentOnOutput(t *testing.T) {
	in := "x\x1b[31m\u202e\xff\n"
	once := Safe(in)
	if Safe(once) != once {
		t.Fatalf("Safe is not stable on its own output: %q", once)
	}
	if strings.ContainsAny(once, "\x1b\n\u202e") {
		t.Fatalf("unsafe character left in %q", once)
	}
}

func TestSafeNoCopy(t *testing.T) {
	s := strings.Repeat("plain text ", 100)
	if n := testing.AllocsPerRun(100, func() { _ = Safe(s) }); n != 0 {
		t.Fatalf("Safe allocated %v times on safe text", n)
	}
}

func FuzzSafe(f *testing.F) {
	for _, s := range []string{"", "abc", "\x1b[0m", "\u202e", "\xff", "é\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Safe(s)
		if firstUnsafe(out) >= 0 {
			t.Fatalf("Safe(%q) = %q still holds an unsafe character", s, out)
		}
		if firstUnsafe(s) < 0 && out != s {
			t.Fatalf("Safe changed safe text %q to %q", s, out)
		}
	})
}

func ExampleSafe() {
	name := "evil\x1b]0;owned\x07" // would retitle the terminal window
	fmt.Println(Safe(name))
	// Output: evil\x1b]0;owned\x07
}
