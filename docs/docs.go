// Package docs embeds the reference pages the plugkit binary cites, so that
// what the CLI says about a diagnostic code (the rules of a SARIF log, say)
// is what docs/diagnostics.md says, with no second copy to drift.
package docs

import (
	_ "embed"
	"regexp"
	"strings"
)

// Diagnostics is docs/diagnostics.md, the table of every diagnostic code.
//
//go:embed diagnostics.md
var Diagnostics string

// Code is one row of a code table in diagnostics.md.
type Code struct {
	Code string // "mcp-cwd-escapes-root"
	// Meaning is the row's explanation, Markdown as written.
	Meaning string
	// Section is the heading of the table's section, and Anchor the
	// fragment that links to it ("manifest-pluginjson").
	Section, Anchor string
}

// DiagnosticCodes parses the code tables of diagnostics.md, in order: every
// table row whose first cell is a code in backquotes. The meaning is the
// last cell; a severity column, where a table has one, is folded into it
// when it says more than "error".
func DiagnosticCodes() []Code {
	// Compiled here, not at package initialisation: every start of plugkit
	// paid for them, and only a SARIF log reads the table.
	headingRe := regexp.MustCompile("^##+ (.+)$")
	rowRe := regexp.MustCompile("^\\| `([a-z0-9]+(?:-[a-z0-9]+)*)` \\|(.*)\\|\\s*$")
	var codes []Code
	section, anchor := "", ""
	for line := range strings.SplitSeq(Diagnostics, "\n") {
		if m := headingRe.FindStringSubmatch(line); m != nil {
			section, anchor = m[1], Anchor(m[1])
			continue
		}
		m := rowRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		cells := strings.Split(m[2], " | ")
		meaning := strings.TrimSpace(cells[len(cells)-1])
		if len(cells) > 1 {
			if sev := strings.TrimSpace(cells[0]); sev != "error" {
				meaning = sev + ": " + meaning
			}
		}
		codes = append(codes, Code{Code: m[1], Meaning: meaning, Section: section, Anchor: anchor})
	}
	return codes
}

// Anchor is the fragment GitHub gives a Markdown heading: lower case,
// spaces as hyphens, punctuation other than hyphens and underscores
// dropped.
func Anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 0x7f:
			b.WriteRune(r)
		}
	}
	return b.String()
}
