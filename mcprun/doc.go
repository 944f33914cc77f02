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
//   - Connect starts one server (creating PLUGIN_DATA with mode 0700 and
//     checking the filesystem again, since it may have changed) and reports
//     it ready, skipped or failed; a Conn then reports when a ready server
//     exits. Start does this for every server of a plugin concurrently.
//
// The expansion rules are deliberately narrow: only ${PLUGIN_ROOT} and
// ${PLUGIN_DATA}, only in args, env values and cwd, in one non-recursive
// pass. Everything else, including $HOME or ${PLUGIN_ROOT_SUFFIX}, stays
// literal, and no shell is ever involved.
//
// # Environment
//
// A stdio server does not inherit the client's environment: it gets the
// variables DefaultInheritedEnv names (PATH, HOME, USER, LOGNAME, SHELL,
// TERM, LANG, LC_* and TMPDIR on Unix, as the official MCP TypeScript SDK
// does, plus the locale and TMPDIR), those PlanOptions.InheritEnv adds, its
// configured env, the host's overlay (PlanOptions.HostEnv), and PLUGIN_ROOT
// and PLUGIN_DATA, in that order. Tokens and credentials in the client's
// environment never reach a plugin unless named.
//
// # Processes
//
// Each stdio server runs in a process group of its own. Closing it closes
// its stdin, waits ShutdownTimeout, sends SIGTERM, and then kills its group
// and every descendant that left the group. On Linux the descendants are
// found in /proc while the server runs, the kernel kills a server whose
// parent dies (the parent-death signal), and StartOptions.Subreaper makes
// the process a child subreaper so that the orphans a server leaves are
// ended too. Elsewhere only the group (on Windows, the process) is killed;
// docs/runtime.md says what remains on each system.
package mcprun
