// Package host plugs Agent Plugins into an agent: it is the skills
// provider and the MCP tool connector that a Go agent host would otherwise
// write itself from agentplugin, skill and mcprun, and the engine of
// plugkit gateway.
//
// A Host serves a set of plugins (loaded packages, or those installed in a
// plugkit home, see package install/hostplugins) that Set can replace
// while it runs:
//
//   - skills: Skills lists them by canonical ID (PLUGIN/SKILL), Prompt
//     renders the <available_skills> block, Skill activates one, and
//     ReadResource reads its files without ever leaving its directory;
//   - MCP servers: started when first needed (or all at once by Start),
//     their tools listed and called under one stable name per tool
//     (ToolName), their prompts and resources forwarded (ResourceURI);
//     a server that exits is reported and restarted on the next call with
//     bounded backoff; every request has a timeout and every list is
//     bounded; Close ends every process;
//   - credentials: Overlays, usually read from a host configuration file
//     (LoadConfig), lay headers and env values over servers' configuration
//     without ever appearing in logs or errors.
//
// A Gateway serves a Host to any MCP client as one MCP server. The rules,
// names and defaults are in docs/runtime.md.
package host
