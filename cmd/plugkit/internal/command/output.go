package command

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/internal/terminal"
)

// Output prints a read verb's result: with --json, doc as exactly one JSON
// document on stdout and nothing else; otherwise the text that text writes.
func Output(cmd *cobra.Command, asJSON bool, doc any, text func(io.Writer)) error {
	if !asJSON {
		text(cmd.OutOrStdout())
		return nil
	}
	if err := WriteJSON(cmd.OutOrStdout(), doc); err != nil {
		return Usage(err)
	}
	return nil
}

// WriteJSON writes one indented JSON document.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Printf is fmt.Fprintf for text that reaches a terminal: every string,
// error and fmt.Stringer argument passes through terminal.Safe, because in
// plugkit such values come from plugins, registries and servers. The format
// itself is plugkit's own and is printed as written. Numbers and other
// values are formatted as fmt does. Every verb's text output goes through
// Printf or PrintDiagnostics; --json output never does (it stays exact).
func Printf(w io.Writer, format string, a ...any) {
	safe := make([]any, len(a))
	for i, v := range a {
		switch v := v.(type) {
		case string:
			safe[i] = terminal.Safe(v)
		case error:
			safe[i] = terminal.Safe(v.Error())
		case fmt.Stringer:
			safe[i] = terminal.Safe(v.String())
		default:
			// Named string types (a transport, a state) are text too.
			if rv := reflect.ValueOf(v); rv.Kind() == reflect.String {
				safe[i] = terminal.Safe(rv.String())
			} else {
				safe[i] = v
			}
		}
	}
	fmt.Fprintf(w, format, safe...)
}

// PrintDiagnostics prints diagnostics one a line, compiler style
// ("mcp.json:7:14: error[code]: message"), each made safe for a terminal.
// Diagnostics are part of a verb's result, so every verb prints them on
// stdout in text mode and inside its document with --json (docs/cli.md).
func PrintDiagnostics(w io.Writer, ds []agentplugin.Diagnostic) {
	for _, d := range ds {
		Printf(w, "%s\n", d)
	}
}

// Plural spells a count with its noun: "1 skill", "2 skills".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
