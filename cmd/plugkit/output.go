package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
)

// output prints a read verb's result: with --json, doc as exactly one JSON
// document on stdout and nothing else; otherwise the text that text writes.
func output(cmd *cobra.Command, asJSON bool, doc any, text func(io.Writer)) error {
	if !asJSON {
		text(cmd.OutOrStdout())
		return nil
	}
	if err := writeJSON(cmd.OutOrStdout(), doc); err != nil {
		return usage(err)
	}
	return nil
}

// writeJSON writes one indented JSON document.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// plural spells a count with its noun: "1 skill", "2 skills".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// printDiagnostics writes diagnostics one a line, as validate does.
func printDiagnostics(w io.Writer, ds []agentplugin.Diagnostic) {
	for _, d := range ds {
		fmt.Fprintln(w, d.String())
	}
}
