// Package version holds plugkit version and the build information that
// --version and SARIF logs print.
package version

import (
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
)

// Verbs are the verbs of this package, by name.
func Verbs() command.Verbs {
	return command.Verbs{
		"version": NewCmdVersion,
	}
}
