package docs

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

func TestAnchor(t *testing.T) {
	for in, want := range map[string]string{
		"Manifest (`plugin.json`)":       "manifest-pluginjson",
		"MCP configuration (`mcp.json`)": "mcp-configuration-mcpjson",
		"Inside `SKILL.md`":              "inside-skillmd",
		"Limits and input errors":        "limits-and-input-errors",
		"Other package paths":            "other-package-paths",
	} {
		if got := Anchor(in); got != want {
			t.Errorf("Anchor(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEveryCodeDocumented: every code the loader and the skill package can
// report has a row in diagnostics.md, once, under a heading, with a
// meaning. The CLI builds SARIF rules from these rows, so a code missing
// here would reach code scanning without help.
func TestEveryCodeDocumented(t *testing.T) {
	rows := map[string]Code{}
	for _, c := range DiagnosticCodes() {
		if _, dup := rows[c.Code]; dup {
			t.Errorf("%s is documented twice", c.Code)
		}
		if c.Meaning == "" || c.Anchor == "" {
			t.Errorf("%s: no meaning or section: %+v", c.Code, c)
		}
		rows[c.Code] = c
	}
	var want []string
	src, err := os.ReadFile("../agentplugin/codes.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^\s*Code\w+\s*=\s*"([a-z0-9-]+)"`).FindAllSubmatch(src, -1) {
		want = append(want, string(m[1]))
	}
	doc, err := os.ReadFile("../skill/doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^//\t(skill-[a-z0-9-]+)\s`).FindAllSubmatch(doc, -1) {
		want = append(want, string(m[1]))
	}
	if len(want) < 60 {
		t.Fatalf("found only %d codes in the sources; has their layout changed?", len(want))
	}
	for _, code := range want {
		if _, ok := rows[code]; !ok {
			t.Errorf("code %s is not documented in diagnostics.md", code)
		}
	}
	for _, code := range []string{"input-invalid", "io-error", "skill-name-mismatch", "path-cycle"} {
		if !slices.ContainsFunc(DiagnosticCodes(), func(c Code) bool { return c.Code == code }) {
			t.Errorf("%s missing", code)
		}
	}
}

func TestMeaningFoldsSeverity(t *testing.T) {
	for _, c := range DiagnosticCodes() {
		switch c.Code {
		case "manifest-unknown-field":
			if c.Meaning[:8] != "warning:" || c.Anchor != "manifest-pluginjson" {
				t.Errorf("%+v", c)
			}
		case "manifest-missing":
			if c.Meaning[:3] != "no " {
				t.Errorf("%+v", c)
			}
		}
	}
}
