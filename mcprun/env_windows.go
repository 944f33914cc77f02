package mcprun

import "strings"

// envKey is the identity of an environment name: case-insensitive on
// Windows.
func envKey(k string) string { return strings.ToUpper(k) }

// defaultInherited is the base environment a stdio server gets: the
// official MCP TypeScript SDK's Windows list plus TMP and the locale.
var defaultInherited = []string{"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH",
	"PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "TMP", "USERNAME", "USERPROFILE",
	"PROGRAMFILES", "LANG", "LC_*"}
