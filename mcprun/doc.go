// Package mcprun launches the MCP servers of an Agent Plugins 1.0.0 plugin
// exactly as spec sections 4.1, 7.2 and 9 require, and keeps live MCP
// sessions to them through the official MCP Go SDK.
//
// It works in two steps, so that the rules can be checked without starting
// anything:
//
//   - Plan turns one configured server (an agentplugin.Server, values as
//     written in mcp.json) into a LaunchPlan: for stdio the executable path,
//     argv, environment and working directory; for Streamable HTTP and
//     legacy SSE the endpoint and an *http.Client that enforces the header
//     and redirect policy. Plan only reads the filesystem (to resolve links
//     and check containment); it creates nothing and starts nothing.
//   - Start prepares every plan (creating PLUGIN_DATA with mode 0700 and
//     checking the filesystem again, since it may have changed), connects to
//     all servers concurrently and reports each as ready, skipped or failed.
//     Runtime.Close ends every session and then kills the whole process
//     group of every stdio server, so no process the plugin started survives.
//
// The expansion rules are deliberately narrow: only ${PLUGIN_ROOT} and
// ${PLUGIN_DATA}, only in args, env values and cwd, in one non-recursive
// pass. Everything else, including $HOME or ${PLUGIN_ROOT_SUFFIX}, stays
// literal, and no shell is ever involved.
package mcprun
