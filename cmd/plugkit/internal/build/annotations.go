package build

import (
	"fmt"
	"io"
	"strings"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/internal/terminal"
)

// writeAnnotations prints GitHub Actions workflow commands, one per
// diagnostic ("::error file=F,line=L,col=C,title=CODE::MESSAGE"), which
// annotate the files of a pull request, then each path's summary line.
// Paths are relative to the current directory, where a workflow runs.
func writeAnnotations(w io.Writer, reports []*ValidateReport) {
	loc, err := newLocator(".")
	if err != nil {
		// No current directory: paths stay as absolute as they can be.
		loc, _ = newLocator("/")
	}
	for _, r := range reports {
		for _, d := range r.Diagnostics {
			l := loc.locate(r, d)
			props := []string{"file=" + escapeProperty(l.File)}
			if l.Line > 0 {
				props = append(props, fmt.Sprintf("line=%d", l.Line))
				if l.Column > 0 {
					props = append(props, fmt.Sprintf("col=%d", l.Column))
				}
			}
			props = append(props, "title="+escapeProperty(d.Code))
			msg := d.Message
			if !l.InFile && d.Path != "" {
				msg = position(d) + ": " + msg
			}
			// The log that shows these lines is a terminal emulator too:
			// escaping first keeps newlines as GitHub's %0A, then Safe
			// neutralises any other control character.
			fmt.Fprintf(w, "::%s %s::%s\n", d.Severity, terminal.Safe(strings.Join(props, ",")), terminal.Safe(escapeData(msg)))
		}
	}
	for _, r := range reports {
		command.Printf(w, "%s\n", r.summary())
	}
}

// escapeData escapes a workflow command's message as the runner expects:
// '%', CR and LF.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value: what
// escapeData escapes, and ':' and ',' which delimit properties.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
