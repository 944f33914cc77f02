//go:build !windows

package mcprun

// envKey is the identity of an environment name: case-sensitive on Unix.
func envKey(k string) string { return k }

// defaultInherited is the base environment a stdio server gets: the
// official MCP TypeScript SDK's list (HOME, LOGNAME, PATH, SHELL, TERM,
// USER) plus the locale and the temporary directory, which programs need
// to print and to write scratch files and which hold no secret.
var defaultInherited = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_*", "TMPDIR"}
