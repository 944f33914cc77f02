package command

import (
	"bytes"
	"errors"
	"os"
	"regexp"
	"testing"
)

// TestErrorCodesDocumented: every error code of the --json failure
// document has one row in docs/cli.md's table, with the exit status the
// CLI gives it.
func TestErrorCodesDocumented(t *testing.T) {
	src, err := os.ReadFile("errors.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| ([0-9]+) \\|").FindAllStringSubmatch(string(doc), -1) {
		if _, dup := rows[m[1]]; dup {
			t.Errorf("docs/cli.md lists %s twice", m[1])
		}
		rows[m[1]] = m[2]
	}
	codes := regexp.MustCompile(`(?m)^\s*[cC]ode\w+\s*=\s*"([a-z-]+)"`).FindAllStringSubmatch(string(src), -1)
	if len(codes) < 20 {
		t.Fatalf("found only %d codes in errors.go; has its layout changed?", len(codes))
	}
	// The exit status of each code, where it is fixed.
	exits := map[string]string{CodeUsage: "2", CodeIO: "2", "policy-invalid": "2", CodeInterrupted: "130"}
	for _, m := range codes {
		exit, ok := rows[m[1]]
		want := exits[m[1]]
		if want == "" {
			want = "1"
		}
		if !ok || exit != want {
			t.Errorf("code %s: docs/cli.md row %v (exit %q), want one with exit %s", m[1], ok, exit, want)
		}
		delete(rows, m[1])
	}
	for code := range rows {
		t.Errorf("docs/cli.md documents %s, which errors.go does not define", code)
	}
}

// TestPrintErrorTabs: the tabs that indent a line of an error (cobra's
// suggestions) stay tabs; a tab inside a line is escaped.
func TestPrintErrorTabs(t *testing.T) {
	var b bytes.Buffer
	printError(&b, errors.New("name\tx\n\t\tindented\there"))
	if want := "plugkit: name\\tx\n\t\tindented\\there\n"; b.String() != want {
		t.Errorf("printError: %q, want %q", b.String(), want)
	}
}
