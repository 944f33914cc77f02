// Package host plugs Agent Plugins into an agent: it is the skills
// provider and the MCP tool connector that a Go agent host would otherwise
// write itself from agentplugin, skill and mcprun, and the engine of
// plugkit gateway.
package host
