// Package build holds the verbs that read and build plugins on disk:
// validate, pack, inspect, unpack, init, schema and digest, and the
// validation report that push and publish print too.
package build

import (
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
)

// Verbs are the verbs of this package, by name.
func Verbs() command.Verbs {
	return command.Verbs{
		"digest":   NewCmdDigest,
		"init":     NewCmdInit,
		"inspect":  NewCmdInspect,
		"pack":     NewCmdPack,
		"schema":   NewCmdSchema,
		"unpack":   NewCmdUnpack,
		"validate": NewCmdValidate,
	}
}
