// Package run holds the verbs that run a plugin's MCP servers: mcp (list,
// call), run's shared flags, and gateway, which serves the tools of plugins
// to an agent.
package run

import (
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
)

// Verbs are the verbs of this package, by name.
func Verbs() command.Verbs {
	return command.Verbs{
		"gateway": NewCmdGateway,
		"mcp":     NewCmdMCP,
	}
}
