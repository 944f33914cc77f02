//go:build !windows

package mcprun

// envKey is the identity of an environment name: case-sensitive on Unix.
func envKey(k string) string { return k }
