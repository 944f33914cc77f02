package oci

import (
	"regexp"
	"strings"
	"testing"
)

// tagGrammar is the OCI distribution specification's tag pattern, which
// isTag implements by hand.
var tagGrammar = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

func TestIsTagMatchesGrammar(t *testing.T) {
	for _, s := range []string{
		"", "v1", "1.0.0", "_x", ".x", "-x", "x.", "x-", "latest", "a/b", "a:b", "a@b", "é",
		"x\n", "A_z-9.Z", strings.Repeat("a", 127), strings.Repeat("a", 128), strings.Repeat("a", 129),
	} {
		if got, want := isTag(s), tagGrammar.MatchString(s); got != want {
			t.Errorf("isTag(%q) = %v, the grammar says %v", s, got, want)
		}
	}
}

// FuzzIsTag: isTag agrees with the grammar on every input.
func FuzzIsTag(f *testing.F) {
	for _, s := range []string{"v1.0.0", "_", ".", strings.Repeat("z", 128)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isTag(s), tagGrammar.MatchString(s); got != want {
			t.Fatalf("isTag(%q) = %v, the grammar says %v", s, got, want)
		}
	})
}
