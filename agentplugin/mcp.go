package agentplugin

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/plugkit/plugkit/internal/jsontree"
	"github.com/plugkit/plugkit/snapshot"
)

const mcpPath = "mcp.json"

// mcp loads mcp.json (spec 7.2). A problem with the document as a whole
// disables MCP for the plugin; a problem with one entry skips that server.
func (l *loader) mcp() {
	l.pkg.MCP = MCPAbsent
	disable := func(code, msg string) {
		l.report(Diagnostic{Severity: Error, Code: code, Path: mcpPath, Message: msg + "; MCP is disabled for this plugin"})
		l.pkg.MCP = MCPDisabled
	}
	switch k, why := l.kind(mcpPath); {
	case why == snapshot.ReasonEscape || why == snapshot.ReasonCycle:
		disable(CodeMCPEscapes, "mcp.json does not resolve within the plugin root ("+string(why)+")")
		return
	case why != "" || k == snapshot.Dir:
		disable(CodeMCPNotFile, "mcp.json is not a regular file")
		return
	case k == snapshot.Absent:
		return
	}
	src := l.snap.Files[mcpPath]
	root := l.parseJSON(mcpPath, src, Error, CodeMCPJSON, CodeMCPDuplicateKey)
	if root == nil {
		l.pkg.MCP = MCPDisabled
		return
	}
	if root.Kind != jsontree.Object {
		l.at(Error, CodeMCPNotObject, mcpPath, src, "", root.Offset,
			"mcp.json must hold a JSON object, not %s; MCP is disabled for this plugin", article(root.Kind))
		l.pkg.MCP = MCPDisabled
		return
	}
	ok := true
	fail := func(code, ptr string, offset int, format string, args ...any) {
		l.at(Error, code, mcpPath, src, ptr, offset, format+"; MCP is disabled for this plugin", args...)
		ok = false
	}
	switch s := root.Get("$schema"); {
	case s == nil:
		fail(CodeMCPRequired, "", root.Offset, "required field \"$schema\" is missing")
	case s.Kind != jsontree.String:
		fail(CodeMCPSchema, "/$schema", s.Offset, "\"$schema\" must be a string, not %s", article(s.Kind))
	default:
		v := versionByMCPSchema(s.Str)
		switch {
		case v == nil:
			fail(CodeMCPSchema, "/$schema", s.Offset, "%q is not a recognised MCP configuration schema", s.Str)
		case v.Version != l.version.Version:
			fail(CodeMCPSchemaMismatch, "/$schema", s.Offset,
				"mcp.json targets Agent Plugins %s but plugin.json targets %s", v.Version, l.version.Version)
		}
	}
	servers := root.Get("mcpServers")
	switch {
	case servers == nil:
		fail(CodeMCPRequired, "", root.Offset, "required field \"mcpServers\" is missing")
	case servers.Kind != jsontree.Object:
		fail(CodeMCPServersType, "/mcpServers", servers.Offset, "\"mcpServers\" must be an object, not %s", article(servers.Kind))
	}
	for _, m := range root.Members {
		if m.Name != "$schema" && m.Name != "mcpServers" {
			fail(CodeMCPUnknownField, "/"+jsontree.EscapePointer(m.Name), m.Offset,
				"unknown top-level field %q (mcp.json allows only $schema and mcpServers)", m.Name)
		}
	}
	if !ok {
		l.pkg.MCP = MCPDisabled
		return
	}
	l.pkg.MCP = MCPConfigured
	for i, m := range servers.Members {
		if i >= l.limits.MaxServers {
			l.at(Error, CodeMCPServersLimit, mcpPath, src, "/mcpServers", servers.Offset,
				"more than %d servers (limit MaxServers); the rest are skipped", l.limits.MaxServers)
			break
		}
		sc := &serverCheck{l: l, src: src, name: m.Name, ptr: "/mcpServers/" + jsontree.EscapePointer(m.Name), ok: true}
		if s := sc.check(m); s != nil {
			l.pkg.Servers = append(l.pkg.Servers, *s)
		}
	}
	sort.Slice(l.pkg.Servers, func(i, j int) bool { return l.pkg.Servers[i].Name < l.pkg.Servers[j].Name })
}

// serverCheck validates one entry of mcpServers (spec 7.2.1).
type serverCheck struct {
	l    *loader
	src  []byte
	name string
	ptr  string
	ok   bool
}

func (c *serverCheck) fail(code, ptr string, offset int, format string, args ...any) {
	c.l.at(Error, code, mcpPath, c.src, ptr, offset, "server %q: "+format+"; the server is skipped",
		append([]any{c.name}, args...)...)
	c.ok = false
}

// variantFields lists the fields of each closed variant.
var variantFields = map[Transport][]string{
	Stdio:          {"type", "command", "args", "env", "cwd"},
	StreamableHTTP: {"type", "url", "headers"},
	SSE:            {"type", "url", "headers"},
}

func (c *serverCheck) check(m *jsontree.Member) *Server {
	v := m.Value
	if c.name == "" || strings.ContainsAny(c.name, "/\x00") {
		c.fail(CodeServerName, c.ptr, m.Offset, "a server name must be non-empty and hold no '/' (it forms the ID PLUGIN/SERVER)")
	}
	if v.Kind != jsontree.Object {
		c.fail(CodeServerNotObject, c.ptr, v.Offset, "the configuration must be an object, not %s", article(v.Kind))
		return nil
	}
	t := v.Get("type")
	switch {
	case t == nil:
		c.fail(CodeServerRequired, c.ptr, v.Offset, "required field \"type\" is missing")
		return nil
	case t.Kind != jsontree.String:
		c.fail(CodeServerType, c.ptr+"/type", t.Offset, "\"type\" must be a string, not %s", article(t.Kind))
		return nil
	}
	typ := Transport(t.Str)
	fields, known := variantFields[typ]
	if !known {
		c.fail(CodeServerType, c.ptr+"/type", t.Offset, "unknown type %q (expected stdio, streamable-http or sse)", t.Str)
		return nil
	}
	s := &Server{ID: c.l.pkg.Name + "/" + c.name, Name: c.name, Type: typ, Raw: v.Raw(c.src)}
	for _, f := range v.Members {
		if !slices.Contains(fields, f.Name) {
			c.fail(CodeServerUnknownField, c.ptr+"/"+jsontree.EscapePointer(f.Name), f.Offset,
				"field %q is not allowed in a %s server%s", f.Name, typ, otherVariant(f.Name, typ))
		}
	}
	if typ == Stdio {
		c.stdio(v, s)
	} else {
		c.remote(v, s)
	}
	if !c.ok {
		return nil
	}
	if !c.l.supports(typ) {
		c.l.at(Warning, CodeTransportUnsupported, mcpPath, c.src, c.ptr+"/type", t.Offset,
			"server %q: transport %s is not supported by this client; the server is skipped", c.name, typ)
		return nil
	}
	return s
}

func otherVariant(field string, typ Transport) string {
	for _, t := range AllTransports {
		if t != typ && slices.Contains(variantFields[t], field) {
			return " (it belongs to the " + string(t) + " variant)"
		}
	}
	return ""
}

func (l *loader) supports(t Transport) bool {
	return l.opts.Transports == nil || slices.Contains(l.opts.Transports, t)
}

// str returns a required or optional string field; ok is false when it is
// present with another type (reported).
func (c *serverCheck) str(obj *jsontree.Node, field string, required bool) (*jsontree.Node, bool) {
	n := obj.Get(field)
	switch {
	case n == nil && required:
		c.fail(CodeServerRequired, c.ptr, obj.Offset, "required field %q is missing", field)
		return nil, false
	case n == nil:
		return nil, true
	case n.Kind != jsontree.String:
		c.fail(CodeServerFieldType, c.ptr+"/"+field, n.Offset, "%q must be a string, not %s", field, article(n.Kind))
		return nil, false
	}
	return n, true
}

// stringMap reads an optional object of strings (env, headers). Values are
// never quoted in messages: they may be secrets.
func (c *serverCheck) stringMap(obj *jsontree.Node, field string) (map[string]string, []*jsontree.Member) {
	n := obj.Get(field)
	if n == nil {
		return nil, nil
	}
	if n.Kind != jsontree.Object {
		c.fail(CodeServerFieldType, c.ptr+"/"+field, n.Offset, "%q must be an object of strings, not %s", field, article(n.Kind))
		return nil, nil
	}
	out := make(map[string]string, len(n.Members))
	for _, m := range n.Members {
		if m.Value.Kind != jsontree.String {
			c.fail(CodeServerFieldType, c.ptr+"/"+field+"/"+jsontree.EscapePointer(m.Name), m.Value.Offset,
				"%s %q must have a string value, not %s", field, m.Name, article(m.Value.Kind))
			continue
		}
		out[m.Name] = m.Value.Str
	}
	return out, n.Members
}

func (c *serverCheck) stdio(v *jsontree.Node, s *Server) {
	if cmd, ok := c.str(v, "command", true); ok {
		s.Command = cmd.Str
		c.command(cmd)
	}
	if a := v.Get("args"); a != nil {
		if a.Kind != jsontree.Array {
			c.fail(CodeServerFieldType, c.ptr+"/args", a.Offset, "\"args\" must be an array of strings, not %s", article(a.Kind))
		} else {
			s.Args = make([]string, 0, len(a.Elems))
			for i, e := range a.Elems {
				if e.Kind != jsontree.String {
					c.fail(CodeServerFieldType, fmt.Sprintf("%s/args/%d", c.ptr, i), e.Offset, "\"args\" must hold only strings, not %s", article(e.Kind))
					continue
				}
				s.Args = append(s.Args, e.Str)
			}
		}
	}
	env, members := c.stringMap(v, "env")
	for _, m := range members {
		p := c.ptr + "/env/" + jsontree.EscapePointer(m.Name)
		switch {
		case m.Name == "PLUGIN_ROOT" || m.Name == "PLUGIN_DATA":
			c.fail(CodeEnvReserved, p, m.Offset, "env must not set %s: the client supplies it (spec 9.2)", m.Name)
		case m.Name == "" || strings.ContainsAny(m.Name, "=\x00"):
			c.fail(CodeEnvName, p, m.Offset, "env name %q cannot be an environment variable name", m.Name)
		}
	}
	s.Env = env
	if cwd, ok := c.str(v, "cwd", false); ok && cwd != nil {
		s.Cwd = cwd.Str
		c.cwd(cwd)
	}
}

// command applies spec 7.2.1: one executable token, either a bare name or
// a "./" path inside the root; never absolute, never a placeholder.
func (c *serverCheck) command(n *jsontree.Node) {
	cmd, ptr := n.Str, c.ptr+"/command"
	bad := func(format string, args ...any) { c.fail(CodeCommandInvalid, ptr, n.Offset, format, args...) }
	switch {
	case cmd == "":
		bad("\"command\" is empty")
		return
	case strings.Contains(cmd, "${PLUGIN_ROOT}") || strings.Contains(cmd, "${PLUGIN_DATA}"):
		bad("placeholders are not expanded in \"command\"; use a ./ path for a bundled executable")
		return
	case strings.ContainsAny(cmd, "\\\x00"):
		bad("\"command\" must not contain backslashes or NUL")
		return
	case strings.HasPrefix(cmd, "../"):
		c.fail(CodeCommandEscapes, ptr, n.Offset, "command %q escapes the plugin root", cmd)
		return
	case !strings.HasPrefix(cmd, "./"):
		if strings.Contains(cmd, "/") || strings.IndexFunc(cmd, isSpace) >= 0 || cmd == "." || cmd == ".." {
			bad("command %q is neither a bare executable name nor a ./ path (it is one token, not a shell command)", cmd)
		}
		return
	}
	clean, inside := inRoot(cmd)
	switch {
	case !inside:
		c.fail(CodeCommandEscapes, ptr, n.Offset, "command %q escapes the plugin root", cmd)
		return
	case clean == "" || strings.HasSuffix(cmd, "/"):
		bad("command %q names a directory, not an executable", cmd)
		return
	}
	switch k, why := c.l.kind(clean); {
	case why == snapshot.ReasonEscape || why == snapshot.ReasonCycle:
		c.fail(CodeCommandEscapes, ptr, n.Offset, "command %q does not resolve within the plugin root (%s)", cmd, why)
	case k == snapshot.Dir || why == snapshot.ReasonSpecial:
		bad("command %q is not a regular file", cmd)
	case k == snapshot.Absent:
		c.l.at(Warning, CodeCommandNotFound, mcpPath, c.src, ptr, n.Offset,
			"server %q: command %q is not in the package; starting it will fail", c.name, cmd)
	case c.l.snap.Mode(clean)&0o111 == 0:
		c.l.at(Warning, CodeCommandNotExecutable, mcpPath, c.src, ptr, n.Offset,
			"server %q: command %q is not executable (mode %04o); starting it will fail", c.name, cmd, c.l.snap.Mode(clean))
	}
}

func isSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x85, 0xA0:
		return true
	}
	return r > 0xff && strings.ContainsRune("\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000", r)
}

// The prefixes of the cwd forms of spec 7.2.1.
const (
	rootPlaceholder = "${PLUGIN_ROOT}"
	dataPlaceholder = "${PLUGIN_DATA}"
)

// cwd checks the three forms of spec 7.2.1 and catches ".." escapes
// lexically; links are judged against the snapshot's omissions here and
// against the real filesystem again at launch (package mcprun).
func (c *serverCheck) cwd(n *jsontree.Node) {
	cwd, ptr := n.Str, c.ptr+"/cwd"
	if strings.ContainsAny(cwd, "\\\x00") {
		c.fail(CodeCwdInvalid, ptr, n.Offset, "\"cwd\" must not contain backslashes or NUL")
		return
	}
	var rel string
	inPackage := true
	switch {
	case strings.HasPrefix(cwd, "./"):
		rel = cwd
	case cwd == rootPlaceholder || strings.HasPrefix(cwd, rootPlaceholder+"/"):
		rel = "." + cwd[len(rootPlaceholder):]
	case cwd == dataPlaceholder || strings.HasPrefix(cwd, dataPlaceholder+"/"):
		rel, inPackage = "."+cwd[len(dataPlaceholder):], false
	default:
		c.fail(CodeCwdInvalid, ptr, n.Offset,
			"cwd %q must start with ./, ${PLUGIN_ROOT} or ${PLUGIN_DATA}", cwd)
		return
	}
	clean, inside := inRoot(rel)
	if !inside {
		where := "plugin root"
		if !inPackage {
			where = "plugin data directory"
		}
		c.fail(CodeCwdEscapes, ptr, n.Offset, "cwd %q escapes the %s", cwd, where)
		return
	}
	if inPackage && clean != "" {
		if _, why := c.l.kind(clean); why == snapshot.ReasonEscape || why == snapshot.ReasonCycle {
			c.fail(CodeCwdEscapes, ptr, n.Offset, "cwd %q does not resolve within the plugin root (%s)", cwd, why)
		}
	}
}

func (c *serverCheck) remote(v *jsontree.Node, s *Server) {
	if u, ok := c.str(v, "url", true); ok {
		s.URL = u.Str
		if code, why := checkURL(u.Str); code != "" {
			c.fail(code, c.ptr+"/url", u.Offset, "%s", why)
		}
	}
	headers, members := c.stringMap(v, "headers")
	seen := map[string]string{}
	for _, m := range members {
		p := c.ptr + "/headers/" + jsontree.EscapePointer(m.Name)
		if !validHeaderName(m.Name) {
			c.fail(CodeHeaderInvalid, p, m.Offset, "%s", CheckHeader(m.Name, ""))
			continue
		}
		if m.Value.Kind == jsontree.String {
			if err := CheckHeader(m.Name, m.Value.Str); err != nil {
				c.fail(CodeHeaderInvalid, p, m.Value.Offset, "%s", err)
			}
		}
		lower := strings.ToLower(m.Name)
		if other, dup := seen[lower]; dup {
			c.fail(CodeHeaderDuplicate, p, m.Offset, "header %q repeats %q (header names are case-insensitive)", m.Name, other)
		}
		seen[lower] = m.Name
	}
	s.Headers = headers
}
