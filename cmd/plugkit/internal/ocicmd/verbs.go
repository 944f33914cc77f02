// Package ocicmd holds the verbs that move plugins through OCI registries
// and layouts, and one from a Backplane registry: push, pull, copy, export,
// fetch, login and logout.
package ocicmd

import (
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
)

// Verbs are the verbs of this package, by name.
func Verbs() command.Verbs {
	return command.Verbs{
		"copy":   NewCmdCopy,
		"export": NewCmdExport,
		"fetch":  NewCmdFetch,
		"login":  NewCmdLogin,
		"logout": NewCmdLogout,
		"pull":   NewCmdPull,
		"push":   NewCmdPush,
	}
}
