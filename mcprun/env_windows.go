package mcprun

import "strings"

// envKey is the identity of an environment name: case-insensitive on
// Windows.
func envKey(k string) string { return strings.ToUpper(k) }
