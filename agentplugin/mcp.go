package agentplugin

import (
	"bytes"
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
	d, root, ok := l.parseJSON(mcpPath, Error, CodeMCPJSON, CodeMCPDuplicateKey)
	if !ok {
		l.pkg.MCP = MCPDisabled
		return
	}
	if root.Kind() != jsontree.Object {
		l.at(Error, CodeMCPNotObject, d, ptr(""), root.Offset(),
			"mcp.json must hold a JSON object, not %s; MCP is disabled for this plugin", article(root.Kind()))
		l.pkg.MCP = MCPDisabled
		return
	}
	fail := func(code string, p pointer, offset int, format string, args ...any) {
		l.at(Error, code, d, p, offset, format+"; MCP is disabled for this plugin", args...)
		ok = false
	}
	switch s, found := root.Get("$schema"); {
	case !found:
		fail(CodeMCPRequired, ptr(""), root.Offset(), "required field \"$schema\" is missing")
	case s.Kind() != jsontree.String:
		fail(CodeMCPSchema, ptr("/$schema"), s.Offset(), "\"$schema\" must be a string, not %s", article(s.Kind()))
	default:
		v := versionByMCPSchema(s.Str())
		switch {
		case v == nil:
			fail(CodeMCPSchema, ptr("/$schema"), s.Offset(), "%q is not a recognised MCP configuration schema", s.Str())
		case v.Version != l.version.Version:
			fail(CodeMCPSchemaMismatch, ptr("/$schema"), s.Offset(),
				"mcp.json targets Agent Plugins %s but plugin.json targets %s", v.Version, l.version.Version)
		}
	}
	servers, found := root.Get("mcpServers")
	switch {
	case !found:
		fail(CodeMCPRequired, ptr(""), root.Offset(), "required field \"mcpServers\" is missing")
	case servers.Kind() != jsontree.Object:
		fail(CodeMCPServersType, ptr("/mcpServers"), servers.Offset(), "\"mcpServers\" must be an object, not %s", article(servers.Kind()))
	}
	for m := range root.Members() {
		if !m.Key.Equal("$schema") && !m.Key.Equal("mcpServers") {
			l.atMsg(Error, CodeMCPUnknownField, d, ptrMember("", m.Key), m.Offset(), func() string {
				return fmt.Sprintf("unknown top-level field %q (mcp.json allows only $schema and mcpServers); MCP is disabled for this plugin", m.Name())
			})
			ok = false
		}
	}
	if !ok {
		l.pkg.MCP = MCPDisabled
		return
	}
	l.pkg.MCP = MCPConfigured
	serversRule, _ := mcpRule(l.version).field("mcpServers")
	i := 0
	for m := range servers.Members() {
		if i >= l.limits.MaxServers {
			l.at(Error, CodeMCPServersLimit, d, ptr("/mcpServers"), servers.Offset(),
				"more than %d servers (limit MaxServers); the rest are skipped", l.limits.MaxServers)
			break
		}
		i++
		name := m.Name()
		sc := &serverCheck{l: l, doc: d, servers: serversRule, name: name, ptr: "/mcpServers/" + jsontree.EscapePointer(name), ok: true}
		if s := sc.check(m); s != nil {
			l.pkg.Servers = append(l.pkg.Servers, *s)
		}
	}
	sort.Slice(l.pkg.Servers, func(i, j int) bool { return l.pkg.Servers[i].Name < l.pkg.Servers[j].Name })
}

// serverCheck validates one entry of mcpServers (spec 7.2.1).
type serverCheck struct {
	l       *loader
	doc     *jsonDoc
	servers *rule // the rule of mcpServers, whose values are the variants
	name    string
	ptr     string
	ok      bool
}

func (c *serverCheck) fail(code string, p pointer, offset int, format string, args ...any) {
	c.failMsg(code, p, offset, func() string { return fmt.Sprintf(format, args...) })
}

// failMsg is fail with a message built only when it is kept (see atMsg).
func (c *serverCheck) failMsg(code string, p pointer, offset int, msg func() string) {
	c.ok = false
	c.l.atMsg(Error, code, c.doc, p, offset, func() string {
		return fmt.Sprintf("server %q: %s; the server is skipped", c.name, msg())
	})
}

func (c *serverCheck) check(m jsontree.Member) *Server {
	v := m.Value
	if c.name == "" || strings.ContainsAny(c.name, "/\x00") {
		c.fail(CodeServerName, ptr(c.ptr), m.Offset(), "a server name must be non-empty and hold no '/' (it forms the ID PLUGIN/SERVER)")
	}
	if v.Kind() != jsontree.Object {
		c.fail(CodeServerNotObject, ptr(c.ptr), v.Offset(), "the configuration must be an object, not %s", article(v.Kind()))
		return nil
	}
	t, found := v.Get("type")
	switch {
	case !found:
		c.fail(CodeServerRequired, ptr(c.ptr), v.Offset(), "required field \"type\" is missing")
		return nil
	case t.Kind() != jsontree.String:
		c.fail(CodeServerType, ptr(c.ptr+"/type"), t.Offset(), "\"type\" must be a string, not %s", article(t.Kind()))
		return nil
	}
	typ := Transport(t.Str())
	variantRule, known := variant(c.servers, typ)
	if !known {
		c.fail(CodeServerType, ptr(c.ptr+"/type"), t.Offset(), "unknown type %q (expected stdio, streamable-http or sse)", t.Str())
		return nil
	}
	s := &Server{ID: c.l.pkg.Name + "/" + c.name, Name: c.name, Type: typ, Raw: v.Raw()}
	fields := variantRule.fieldNames()
	for f := range v.Members() {
		if !slices.ContainsFunc(fields, f.Key.Equal) {
			c.failMsg(CodeServerUnknownField, ptrMember(c.ptr, f.Key), f.Offset(), func() string {
				name := f.Name()
				return fmt.Sprintf("field %q is not allowed in a %s server%s", name, typ, c.otherVariant(name, typ))
			})
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
		c.l.at(Warning, CodeTransportUnsupported, c.doc, ptr(c.ptr+"/type"), t.Offset(),
			"server %q: transport %s is not supported by this client; the server is skipped", c.name, typ)
		return nil
	}
	return s
}

// otherVariant names the variant a field of another transport belongs to,
// for the message about it.
func (c *serverCheck) otherVariant(field string, typ Transport) string {
	for _, t := range AllTransports {
		if v, _ := variant(c.servers, t); t != typ && slices.Contains(v.fieldNames(), field) {
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
func (c *serverCheck) str(obj jsontree.Node, field string, required bool) (n jsontree.Node, ok bool) {
	n, found := obj.Get(field)
	switch {
	case !found && required:
		c.fail(CodeServerRequired, ptr(c.ptr), obj.Offset(), "required field %q is missing", field)
		return n, false
	case !found:
		return n, true
	case n.Kind() != jsontree.String:
		c.fail(CodeServerFieldType, ptr(c.ptr+"/"+field), n.Offset(), "%q must be a string, not %s", field, article(n.Kind()))
		return jsontree.Node{}, false
	}
	return n, true
}

// stringMap reads an optional object of strings (env, headers) and
// returns it with the object, for the checks of its names. Values are
// never quoted in messages: they may be secrets.
func (c *serverCheck) stringMap(obj jsontree.Node, field string) (map[string]string, jsontree.Node) {
	n, found := obj.Get(field)
	if !found {
		return nil, jsontree.Node{}
	}
	p := c.ptr + "/" + field
	if n.Kind() != jsontree.Object {
		c.fail(CodeServerFieldType, ptr(p), n.Offset(), "%q must be an object of strings, not %s", field, article(n.Kind()))
		return nil, jsontree.Node{}
	}
	out := make(map[string]string, n.Len())
	names := jsontree.NewNames(n) // the keys of out, one allocation
	for m := range n.Members() {
		if m.Value.Kind() != jsontree.String {
			c.failMsg(CodeServerFieldType, ptrMember(p, m.Key), m.Value.Offset(), func() string {
				return fmt.Sprintf("%s %q must have a string value, not %s", field, m.Name(), article(m.Value.Kind()))
			})
			continue
		}
		out[names.Name(m.Key)] = m.Value.Str()
	}
	return out, n
}

func (c *serverCheck) stdio(v jsontree.Node, s *Server) {
	if cmd, ok := c.str(v, "command", true); ok {
		s.Command = cmd.Str()
		c.command(cmd)
	}
	if a, found := v.Get("args"); found {
		p := c.ptr + "/args"
		if a.Kind() != jsontree.Array {
			c.fail(CodeServerFieldType, ptr(p), a.Offset(), "\"args\" must be an array of strings, not %s", article(a.Kind()))
		} else {
			s.Args = make([]string, 0, countStrings(a))
			for i, e := range a.Elems() {
				if e.Kind() != jsontree.String {
					c.fail(CodeServerFieldType, ptrIndex(p, i), e.Offset(), "\"args\" must hold only strings, not %s", article(e.Kind()))
					continue
				}
				s.Args = append(s.Args, e.Str())
			}
		}
	}
	env, obj := c.stringMap(v, "env")
	envPtr := c.ptr + "/env" // built once, not per member
	for m := range obj.Members() {
		p := ptrMember(envPtr, m.Key)
		switch {
		case m.Key.Equal("PLUGIN_ROOT") || m.Key.Equal("PLUGIN_DATA"):
			c.failMsg(CodeEnvReserved, p, m.Offset(), func() string {
				return "env must not set " + m.Name() + ": the client supplies it (spec 9.2)"
			})
		case m.Key.Equal("") || nameHasAny(m.Key, "=\x00"):
			c.failMsg(CodeEnvName, p, m.Offset(), func() string {
				return fmt.Sprintf("env name %q cannot be an environment variable name", m.Name())
			})
		}
	}
	s.Env = env
	if cwd, ok := c.str(v, "cwd", false); ok && cwd.Exists() {
		s.Cwd = cwd.Str()
		c.cwd(cwd)
	}
}

// command applies spec 7.2.1: one executable token, either a bare name or
// a "./" path inside the root; never absolute, never a placeholder.
func (c *serverCheck) command(n jsontree.Node) {
	cmd, p := n.Str(), ptr(c.ptr+"/command")
	bad := func(format string, args ...any) { c.fail(CodeCommandInvalid, p, n.Offset(), format, args...) }
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
		c.fail(CodeCommandEscapes, p, n.Offset(), "command %q escapes the plugin root", cmd)
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
		c.fail(CodeCommandEscapes, p, n.Offset(), "command %q escapes the plugin root", cmd)
		return
	case clean == "" || strings.HasSuffix(cmd, "/"):
		bad("command %q names a directory, not an executable", cmd)
		return
	}
	switch k, why := c.l.kind(clean); {
	case why == snapshot.ReasonEscape || why == snapshot.ReasonCycle:
		c.fail(CodeCommandEscapes, p, n.Offset(), "command %q does not resolve within the plugin root (%s)", cmd, why)
	case k == snapshot.Dir || why == snapshot.ReasonSpecial:
		bad("command %q is not a regular file", cmd)
	case k == snapshot.Absent:
		c.l.at(Warning, CodeCommandNotFound, c.doc, p, n.Offset(),
			"server %q: command %q is not in the package; starting it will fail", c.name, cmd)
	case c.l.mode(clean)&0o111 == 0:
		c.l.at(Warning, CodeCommandNotExecutable, c.doc, p, n.Offset(),
			"server %q: command %q is not executable (mode %04o); starting it will fail", c.name, cmd, c.l.mode(clean))
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
func (c *serverCheck) cwd(n jsontree.Node) {
	cwd, p := n.Str(), ptr(c.ptr+"/cwd")
	if strings.ContainsAny(cwd, "\\\x00") {
		c.fail(CodeCwdInvalid, p, n.Offset(), "\"cwd\" must not contain backslashes or NUL")
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
		c.fail(CodeCwdInvalid, p, n.Offset(),
			"cwd %q must start with ./, ${PLUGIN_ROOT} or ${PLUGIN_DATA}", cwd)
		return
	}
	clean, inside := inRoot(rel)
	if !inside {
		where := "plugin root"
		if !inPackage {
			where = "plugin data directory"
		}
		c.fail(CodeCwdEscapes, p, n.Offset(), "cwd %q escapes the %s", cwd, where)
		return
	}
	if inPackage && clean != "" {
		if _, why := c.l.kind(clean); why == snapshot.ReasonEscape || why == snapshot.ReasonCycle {
			c.fail(CodeCwdEscapes, p, n.Offset(), "cwd %q does not resolve within the plugin root (%s)", cwd, why)
		}
	}
}

func (c *serverCheck) remote(v jsontree.Node, s *Server) {
	if u, ok := c.str(v, "url", true); ok {
		s.URL = u.Str()
		if code, why := checkURL(s.URL); code != "" {
			c.fail(code, ptr(c.ptr+"/url"), u.Offset(), "%s", why)
		}
	}
	headers, obj := c.stringMap(v, "headers")
	seen := make(map[string]string, len(headers))
	names := jsontree.NewNames(obj)  // the names, one allocation
	headersPtr := c.ptr + "/headers" // built once, not per member
	for m := range obj.Members() {
		p := ptrMember(headersPtr, m.Key)
		name := names.Name(m.Key)
		if !validHeaderName(name) {
			c.failMsg(CodeHeaderInvalid, p, m.Offset(), CheckHeader(name, "").Error)
			continue
		}
		if m.Value.Kind() == jsontree.String {
			if err := CheckHeader(name, m.Value.Str()); err != nil {
				c.failMsg(CodeHeaderInvalid, p, m.Value.Offset(), err.Error)
			}
		}
		lower := strings.ToLower(name)
		if other, dup := seen[lower]; dup {
			c.failMsg(CodeHeaderDuplicate, p, m.Offset(), func() string {
				return fmt.Sprintf("header %q repeats %q (header names are case-insensitive)", name, other)
			})
		}
		seen[lower] = name
	}
	s.Headers = headers
}

// nameHasAny reports whether the member name key holds any of chars,
// decoding it only when it is written with escapes.
func nameHasAny(key jsontree.Node, chars string) bool {
	raw := key.Raw()
	if bytes.IndexByte(raw, '\\') < 0 {
		return bytes.ContainsAny(raw, chars)
	}
	return strings.ContainsAny(key.Str(), chars)
}
