// Package serve holds plugkit serve, the Backplane registry server, and its
// subcommands (gc, migrate, token).
package serve

import (
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
)

// Verbs are the verbs of this package, by name.
func Verbs() command.Verbs {
	return command.Verbs{
		"serve": NewCmdServe,
	}
}
