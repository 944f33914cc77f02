// Package home holds the verbs that work on a plugin home: install, update,
// remove, sync, list, check and policy, and the home flags and consent
// prompts that run and gateway use too.
package home

import (
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
)

// Verbs are the verbs of this package, by name.
func Verbs() command.Verbs {
	return command.Verbs{
		"check":   NewCmdCheck,
		"install": NewCmdInstall,
		"list":    NewCmdList,
		"policy":  NewCmdPolicy,
		"remove":  NewCmdRemove,
		"sync":    NewCmdSync,
		"update":  NewCmdUpdate,
	}
}
