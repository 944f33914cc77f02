package install

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"reflect"
	"sort"
	"strings"

	"github.com/plugkit/plugkit/agentplugin"
)

// Surface returns the launch surface of a loaded plugin: one Server per
// valid MCP server, sorted by name, with env and header values replaced by
// their sha256.
func Surface(pkg *agentplugin.Package) []Server {
	out := make([]Server, 0, len(pkg.Servers))
	for _, s := range pkg.Servers {
		out = append(out, Server{
			Name:      s.Name,
			Transport: string(s.Type),
			Command:   s.Command,
			Args:      s.Args,
			Cwd:       s.Cwd,
			Env:       hashValues(s.Env),
			URL:       s.URL,
			Headers:   hashValues(s.Headers),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// hashValues maps each name to "sha256:HEX" of its value; nil stays nil,
// so that an absent map and an empty one are the same surface.
func hashValues(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		sum := sha256.Sum256([]byte(v))
		out[k] = "sha256:" + hex.EncodeToString(sum[:])
	}
	return out
}

// skillNames returns the names of the plugin's skills, sorted.
func skillNames(pkg *agentplugin.Package) []string {
	names := make([]string, 0, len(pkg.Skills))
	for _, s := range pkg.Skills {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	return names
}

// SurfaceChange is one difference between an approved launch surface and
// a new one.
type SurfaceChange struct {
	// Server is the server's name.
	Server string `json:"server"`
	// Kind is "added", "removed" or "changed".
	Kind string `json:"kind"`
	// Field is what changed for a changed server: "transport", "command",
	// "args", "cwd", "url", "env NAME" or "header NAME".
	Field string `json:"field,omitempty"`
	// Old and New are the field's values; env and header values appear as
	// their sha256 only, or "(absent)".
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
}

// NeedsConsent reports whether the change widens what the plugin may run
// or where it may send requests: everything but a removed server.
func (c SurfaceChange) NeedsConsent() bool { return c.Kind != "removed" }

// String describes the change on one line (values come from the plugin:
// print them through terminal.Safe).
func (c SurfaceChange) String() string {
	switch c.Kind {
	case "added", "removed":
		return fmt.Sprintf("server %s %s", c.Server, c.Kind)
	}
	return fmt.Sprintf("server %s: %s: %s -> %s", c.Server, c.Field, c.Old, c.New)
}

// DiffSurface lists what differs between the approved servers old and the
// servers new, in server order and then field order.
func DiffSurface(old, new []Server) []SurfaceChange {
	var out []SurfaceChange
	byName := make(map[string]Server, len(old))
	for _, s := range old {
		byName[s.Name] = s
	}
	seen := make(map[string]bool, len(new))
	for _, n := range new {
		seen[n.Name] = true
		o, ok := byName[n.Name]
		if !ok {
			out = append(out, SurfaceChange{Server: n.Name, Kind: "added"})
			continue
		}
		out = append(out, diffServer(o, n)...)
	}
	for _, o := range old {
		if !seen[o.Name] {
			out = append(out, SurfaceChange{Server: o.Name, Kind: "removed"})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Server < out[j].Server })
	return out
}

func diffServer(o, n Server) []SurfaceChange {
	var out []SurfaceChange
	field := func(name, a, b string) {
		if a != b {
			out = append(out, SurfaceChange{Server: n.Name, Kind: "changed", Field: name, Old: orAbsent(a), New: orAbsent(b)})
		}
	}
	field("transport", o.Transport, n.Transport)
	field("command", o.Command, n.Command)
	if !reflect.DeepEqual(nonNil(o.Args), nonNil(n.Args)) {
		field("args", quoteArgs(o.Args), quoteArgs(n.Args))
	}
	field("cwd", o.Cwd, n.Cwd)
	field("url", o.URL, n.URL)
	for _, k := range unionKeys(o.Env, n.Env) {
		field("env "+k, o.Env[k], n.Env[k])
	}
	for _, k := range unionKeys(o.Headers, n.Headers) {
		field("header "+k, o.Headers[k], n.Headers[k])
	}
	return out
}

func orAbsent(s string) string {
	if s == "" {
		return "(absent)"
	}
	return s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// quoteArgs shows args as a list of quoted strings, so that spaces and
// empty arguments stay visible.
func quoteArgs(args []string) string {
	if len(args) == 0 {
		return ""
	}
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = fmt.Sprintf("%q", a)
	}
	return "[" + strings.Join(q, " ") + "]"
}

func unionKeys(a, b map[string]string) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// codePaths are the package paths whose changes count as code changes:
// each "./" command of a stdio server, and the directory holding it unless
// that is the plugin root.
func codePaths(servers []Server) []string {
	var out []string
	for _, s := range servers {
		cmd, ok := strings.CutPrefix(s.Command, "./")
		if !ok {
			continue
		}
		cmd = path.Clean(cmd)
		out = append(out, cmd)
		if dir := path.Dir(cmd); dir != "." {
			out = append(out, dir+"/")
		}
	}
	sort.Strings(out)
	return out
}

// underCode reports whether the package path p is one of codePaths or
// below one of its directories.
func underCode(p string, code []string) bool {
	for _, c := range code {
		if p == c || (strings.HasSuffix(c, "/") && strings.HasPrefix(p, c)) {
			return true
		}
	}
	return false
}
