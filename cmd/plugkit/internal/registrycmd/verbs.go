// Package registrycmd holds the verbs of a Backplane registry's client:
// publish, yank, owners, channel, catalog, resolve and installations.
package registrycmd

import (
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
)

// Verbs are the verbs of this package, by name.
func Verbs() command.Verbs {
	return command.Verbs{
		"catalog":       NewCmdCatalog,
		"channel":       NewCmdChannel,
		"installations": NewCmdInstallations,
		"owners":        NewCmdOwners,
		"publish":       NewCmdPublish,
		"resolve":       NewCmdResolve,
		"yank":          NewCmdYank,
	}
}
