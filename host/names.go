package host

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
)

// MaxNameLength is the longest name ToolName returns: the strictest common
// MCP clients accept tool names matching ^[a-zA-Z0-9_-]{1,64}$.
const MaxNameLength = 64

// ToolName is the one name under which the host (and plugkit gateway)
// exposes the tool TOOL of server SERVER of plugin PLUGIN; forwarded
// prompts are named the same way. It depends on that triple alone, so
// installing or removing other plugins never renames a tool a client has
// already approved.
//
// When PLUGIN and SERVER consist of ASCII letters, digits and hyphens,
// TOOL of letters, digits, hyphens and underscores, and the result has no
// "__" and at most 64 characters, the name is PLUGIN_SERVER_TOOL as is
// ("acme_db_run_query"). Otherwise every other character is replaced by
// "_", the result cut to 54 characters, and "__" plus the first 8
// hexadecimal digits of the sha256 of "PLUGIN/SERVER/TOOL" appended
// ("acme_tools_db_run_query__1a2b3c4d" for plugin acme.tools). Plain names
// never hold "__" and hashed ones always do, so the two forms cannot meet;
// the host withholds a name two triples would share (a 32-bit hash
// collision) rather than route one client's calls to another plugin.
func ToolName(plugin, server, tool string) string {
	plain := plugin + "_" + server + "_" + tool
	if len(plain) <= MaxNameLength && plainPart(plugin, false) && plainPart(server, false) &&
		plainPart(tool, true) && !strings.Contains(plain, "__") {
		return plain
	}
	sum := sha256.Sum256([]byte(plugin + "/" + server + "/" + tool))
	b := []byte(plain)
	for i, c := range b {
		if !nameChar(c, true) {
			b[i] = '_'
		}
	}
	const keep = MaxNameLength - len("__") - 8
	if len(b) > keep {
		b = b[:keep]
	}
	return string(b) + "__" + hex.EncodeToString(sum[:4])
}

// plainPart reports whether s is non-empty and made of name characters,
// underscores only where allowed.
func plainPart(s string, underscore bool) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if !nameChar(s[i], underscore) {
			return false
		}
	}
	return true
}

func nameChar(c byte, underscore bool) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || underscore && c == '_'
}

// splitPlainName returns the plugin and server of a name ToolName made
// without a hash, and false for hashed names and names ToolName never
// makes. A hashed name can only be resolved by listing.
func splitPlainName(name string) (plugin, server string, ok bool) {
	if strings.Contains(name, "__") {
		return "", "", false
	}
	plugin, rest, ok1 := strings.Cut(name, "_")
	server, tool, ok2 := strings.Cut(rest, "_")
	if !ok1 || !ok2 || tool == "" {
		return "", "", false
	}
	return plugin, server, true
}

// ResourceScheme is the URI scheme of the resources the host forwards from
// plugins' MCP servers.
const ResourceScheme = "plugin"

// ResourceURI is the URI under which the host exposes the resource (or
// resource template) uri of server SERVER of plugin PLUGIN:
// plugin://PLUGIN/SERVER/URI, with PLUGIN and SERVER percent-encoded where
// they hold anything but letters, digits, "-", "." and "_", and URI
// appended exactly as the server gave it, so that a template stays a
// template and ParseResourceURI gives back the very same string.
func ResourceURI(plugin, server, uri string) string {
	return ResourceScheme + "://" + escapeSegment(plugin) + "/" + escapeSegment(server) + "/" + uri
}

// ParseResourceURI splits a URI made by ResourceURI.
func ParseResourceURI(u string) (plugin, server, uri string, err error) {
	rest, ok := strings.CutPrefix(u, ResourceScheme+"://")
	if !ok {
		return "", "", "", fmt.Errorf("%w: %q is not a %s:// URI", ErrNotFound, u, ResourceScheme)
	}
	p, rest, ok1 := strings.Cut(rest, "/")
	s, uri, ok2 := strings.Cut(rest, "/")
	if !ok1 || !ok2 {
		return "", "", "", fmt.Errorf("%w: %q names no plugin server", ErrNotFound, u)
	}
	if plugin, err = url.PathUnescape(p); err == nil {
		server, err = url.PathUnescape(s)
	}
	if err != nil {
		return "", "", "", fmt.Errorf("%w: %q: %v", ErrNotFound, u, err)
	}
	return plugin, server, uri, nil
}

// escapeSegment percent-encodes every byte of s but letters, digits, "-",
// "." and "_", so that a segment never holds "/" or a template brace.
func escapeSegment(s string) string {
	var b strings.Builder
	for i := range len(s) {
		c := s[i]
		if nameChar(c, true) || c == '.' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}
