package mcprun

import (
	"fmt"
	"slices"
	"strings"
)

// DefaultInheritedEnv lists the variables of the client's environment that
// a stdio server inherits by default: on Unix HOME, LOGNAME, PATH, SHELL,
// TERM, USER, LANG, every LC_* and TMPDIR (the official MCP TypeScript
// SDK's set plus the locale and TMPDIR); on Windows their equivalents. A
// trailing "*" matches every name with that prefix. Everything else, tokens
// and cloud credentials included, stays with the client unless
// PlanOptions.InheritEnv names it.
func DefaultInheritedEnv() []string { return slices.Clone(defaultInherited) }

// CheckInheritEnv reports whether each pattern is usable in
// PlanOptions.InheritEnv: an environment name, or a prefix followed by one
// "*" ("AWS_*"; a lone "*" inherits everything).
func CheckInheritEnv(patterns []string) error {
	for _, p := range patterns {
		name := strings.TrimSuffix(p, "*")
		if strings.ContainsAny(name, "=*\x00") || (name == "" && p != "*") {
			return fmt.Errorf("mcprun: %q is not an environment variable name or NAME* prefix", p)
		}
	}
	return nil
}

// inheritedEnv filters environ (KEY=VALUE entries) down to the variables
// the patterns name, always skipping values that start with "()": bash
// exports functions that way, and a server has no business receiving code
// through its environment (the TypeScript SDK skips them too).
func inheritedEnv(environ, patterns []string) []string {
	var out []string
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.HasPrefix(v, "()") {
			continue
		}
		if slices.ContainsFunc(patterns, func(p string) bool { return envMatch(p, k) }) {
			out = append(out, kv)
		}
	}
	return out
}

// envMatch reports whether the name k matches the pattern p, with the
// platform's case rules.
func envMatch(p, k string) bool {
	if prefix, ok := strings.CutSuffix(p, "*"); ok {
		return strings.HasPrefix(envKey(k), envKey(prefix))
	}
	return envKey(p) == envKey(k)
}
