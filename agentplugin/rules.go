package agentplugin

import (
	"github.com/plugkit/plugkit/internal/jsontree"
)

// rule is what the specification requires of one JSON value of plugin.json
// or mcp.json, as far as a JSON Schema can say it. The loader takes the
// fields of each object and their types from these rules, and JSONSchema
// writes them out, so that the schema editors check against is the one
// plugkit applies; the checks a schema cannot express (paths that escape
// the root, URLs, headers) are the loader's code.
type rule struct {
	kind        jsontree.Kind
	description string
	// Strings.
	minLength, maxLength int    // in characters; 0 means no bound
	pattern              string // anchored; RE2 syntax that is also ECMA-262
	constant             string // the one value allowed, when set
	// Arrays.
	items *rule
	// Objects: either closed, with the fields listed, or open, with every
	// member's value held to values.
	fields []field
	values *rule
	// names holds the member names of an open object to a string rule;
	// reserved are names refused.
	names    *rule
	reserved []string
	// variants: the value must match exactly one of them (an MCP server).
	variants []*rule
}

// field is one member of a closed object.
type field struct {
	name     string
	required bool
	rule     *rule
}

// field returns the rule of the field called name, and whether the object
// has one.
func (r *rule) field(name string) (*rule, bool) {
	for _, f := range r.fields {
		if f.name == name {
			return f.rule, true
		}
	}
	return nil, false
}

// fieldNames lists the fields of a closed object, in order.
func (r *rule) fieldNames() []string {
	names := make([]string, len(r.fields))
	for i, f := range r.fields {
		names[i] = f.name
	}
	return names
}

func str(description string) *rule { return &rule{kind: jsontree.String, description: description} }

// pluginNamePattern is spec 5.5 as a pattern without lookahead: runs of
// lowercase letters and digits, separated by runs of '.' and '-' in which
// no character follows itself (so no "--" and no ".."). checkPluginName is
// the same rule in code; the differential test holds them together.
const pluginNamePattern = `^[a-z0-9]+(?:(?:\.(?:-\.)*-?|-(?:\.-)*\.?)[a-z0-9]+)*$`

// manifestRule is plugin.json of version v (spec 5).
func manifestRule(v *specVersion) *rule {
	return &rule{kind: jsontree.Object, description: "Agent Plugins " + v.Version + " plugin manifest (plugin.json)", fields: []field{
		{name: "$schema", required: true, rule: &rule{kind: jsontree.String, constant: v.ManifestSchema,
			description: "The plugin manifest schema of the Agent Plugins version this plugin targets."}},
		{name: "name", required: true, rule: &rule{kind: jsontree.String, minLength: 1, maxLength: 64, pattern: pluginNamePattern,
			description: "The plugin's name: lowercase letters, digits, hyphens and periods, starting and ending with a letter or digit, without consecutive hyphens or periods."}},
		{name: "version", rule: str("The plugin's version.")},
		{name: "description", rule: str("What the plugin does.")},
		{name: "author", rule: &rule{kind: jsontree.Object, description: "Who wrote the plugin.", fields: []field{
			{name: "name", rule: str("The author's name.")},
			{name: "email", rule: str("The author's email address.")},
			{name: "url", rule: str("The author's web page.")},
		}}},
		{name: "homepage", rule: str("The plugin's home page.")},
		{name: "repository", rule: str("Where the plugin's source lives.")},
		{name: "license", rule: str("The plugin's license.")},
		{name: "keywords", rule: &rule{kind: jsontree.Array, items: str("A keyword."), description: "Words to find the plugin by."}},
		{name: "extensions", rule: &rule{kind: jsontree.Object, values: &rule{kind: jsontree.Object},
			description: "Client-specific data, keyed by reverse-domain namespace (com.example.client); Agent Plugins gives their contents no meaning."}},
	}}
}

// mcpRule is mcp.json of version v (spec 7.2). Server names and env names
// carry two rules of plugkit beyond the official schema: a server name is
// not empty and holds no '/' (it forms the ID PLUGIN/SERVER), and an env
// name is one a process environment can hold (no '=', not empty).
func mcpRule(v *specVersion) *rule {
	headers := &rule{kind: jsontree.Object, values: str("A header value."), description: "HTTP headers sent with every request."}
	remote := func(t Transport, description string) *rule {
		return &rule{kind: jsontree.Object, description: description, fields: []field{
			{name: "type", required: true, rule: &rule{kind: jsontree.String, constant: string(t)}},
			{name: "url", required: true, rule: &rule{kind: jsontree.String, minLength: 1,
				description: "The MCP endpoint: an absolute https URL, or http to localhost or a loopback address."}},
			{name: "headers", rule: headers},
		}}
	}
	stdio := &rule{kind: jsontree.Object, description: "A server the client starts and talks to over stdin and stdout.", fields: []field{
		{name: "type", required: true, rule: &rule{kind: jsontree.String, constant: string(Stdio)}},
		{name: "command", required: true, rule: &rule{kind: jsontree.String, minLength: 1,
			description: "One executable: a bare name looked up on PATH, or a ./ path inside the plugin."}},
		{name: "args", rule: &rule{kind: jsontree.Array, items: str("An argument; ${PLUGIN_ROOT} and ${PLUGIN_DATA} are expanded."),
			description: "The command's arguments."}},
		{name: "env", rule: &rule{kind: jsontree.Object, values: str("A value; ${PLUGIN_ROOT} and ${PLUGIN_DATA} are expanded."),
			names: &rule{kind: jsontree.String, pattern: `^[^=\x00]+$`}, reserved: []string{"PLUGIN_ROOT", "PLUGIN_DATA"},
			description: "Environment variables for the server; PLUGIN_ROOT and PLUGIN_DATA are the client's."}},
		{name: "cwd", rule: &rule{kind: jsontree.String, pattern: `^(?:\./|\$\{PLUGIN_ROOT\}(?:/|$)|\$\{PLUGIN_DATA\}(?:/|$))`,
			description: "The working directory: ./…, ${PLUGIN_ROOT}[/…] or ${PLUGIN_DATA}[/…], staying within that root."}},
	}}
	return &rule{kind: jsontree.Object, description: "Agent Plugins " + v.Version + " MCP configuration (mcp.json)", fields: []field{
		{name: "$schema", required: true, rule: &rule{kind: jsontree.String, constant: v.MCPSchema,
			description: "The MCP configuration schema of the Agent Plugins version this file targets."}},
		{name: "mcpServers", required: true, rule: &rule{kind: jsontree.Object,
			names:       &rule{kind: jsontree.String, pattern: `^[^/\x00]+$`},
			values:      &rule{variants: []*rule{stdio, remote(StreamableHTTP, "A server reached over Streamable HTTP."), remote(SSE, "A server reached over legacy HTTP+SSE.")}},
			description: "The MCP servers, by name; each name forms the server's ID, PLUGIN/NAME."}},
	}}
}

// variant returns the rule of the server variant of transport t.
func variant(servers *rule, t Transport) (*rule, bool) {
	for _, v := range servers.values.variants {
		if typ, _ := v.field("type"); typ.constant == string(t) {
			return v, true
		}
	}
	return nil, false
}
