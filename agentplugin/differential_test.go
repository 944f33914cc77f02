package agentplugin_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/snapshot"
)

// schemaDir holds the official schemas, beside the project in ../shared.
// They are read, never copied into the project.
var schemaDir = filepath.Join("..", "..", "shared", "spec", "schemas", "1.0.0")

// regexp2Engine lets the validator compile the schema's name pattern,
// which uses a lookahead that Go's regexp lacks.
type regexp2Engine struct{ *regexp2.Regexp }

func (r regexp2Engine) MatchString(s string) bool {
	ok, err := r.Regexp.MatchString(s)
	return err == nil && ok
}

func compileSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	path := filepath.Join(schemaDir, name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("official schemas not found at %s (../shared is absent): %v", path, err)
	}
	c := jsonschema.NewCompiler()
	c.UseRegexpEngine(func(s string) (jsonschema.Regexp, error) {
		re, err := regexp2.Compile(s, regexp2.ECMAScript)
		return regexp2Engine{re}, err
	})
	s, err := c.Compile(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// compilePlugkitSchema compiles plugkit's own schema of document, with
// Go's regexp engine (RE2) or with an ECMAScript one, as editors run it.
func compilePlugkitSchema(t *testing.T, document string, ecma bool) *jsonschema.Schema {
	t.Helper()
	b, err := agentplugin.JSONSchema(document, "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if ecma {
		c.UseRegexpEngine(func(s string) (jsonschema.Regexp, error) {
			re, err := regexp2.Compile(s, regexp2.ECMAScript)
			return regexp2Engine{re}, err
		})
	}
	id := agentplugin.SchemaID(document, "1.0.0")
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func schemaValid(t *testing.T, s *jsonschema.Schema, doc []byte) bool {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(v) == nil
}

// choice is one generated value; exception marks a value the spec text
// rejects although the schema accepts it (spec 5.2: the text wins).
type choice struct {
	v         any
	exception string
}

// absent marks a field left out of the generated object.
var absent = &struct{}{}

// pick takes the first choice (the ordinary one) with probability bias,
// else any choice, so that documents with every field ordinary are common.
func pick(r *rand.Rand, cs []choice, bias float64) choice {
	if r.Float64() < bias {
		return cs[0]
	}
	return cs[r.IntN(len(cs))]
}

// build fills an object from field pools, collecting the exceptions used.
func build(r *rand.Rand, fields map[string][]choice, order []string, bias float64, exceptions *[]string) map[string]any {
	obj := map[string]any{}
	for _, f := range order {
		c := pick(r, fields[f], bias)
		if c.v == absent {
			continue
		}
		obj[f] = c.v
		if c.exception != "" {
			*exceptions = append(*exceptions, c.exception)
		}
	}
	return obj
}

var manifestFields = map[string][]choice{
	"$schema": {{v: manifestSchema}, {v: manifestSchema}, {v: absent}, {v: "https://agent-plugins.org/schemas/2.0.0/plugin.schema.json"}, {v: 1}},
	"name": {{v: "demo"}, {v: "acme.tools"}, {v: "a"}, {v: "lint3r"}, {v: absent}, {v: ""}, {v: "My-Plugin"},
		{v: "-start"}, {v: "has--double"}, {v: "too.many..dots"}, {v: "end-"}, {v: "x.y-z.w"}, {v: "a.-b"},
		{v: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}, {v: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}, {v: 7}, {v: nil}},
	"version":     {{v: absent}, {v: "1.0.0"}, {v: "not semver"}, {v: 1}, {v: nil}},
	"description": {{v: absent}, {v: "d"}, {v: ""}, {v: false}},
	"homepage":    {{v: absent}, {v: "https://x.example"}, {v: "not a url"}, {v: []any{}}},
	"license":     {{v: absent}, {v: "MIT"}, {v: "whatever"}, {v: 3}},
	"author": {{v: absent}, {v: map[string]any{}}, {v: map[string]any{"name": "A"}}, {v: map[string]any{"name": "A", "email": "x", "url": "y"}},
		{v: map[string]any{"name": 1}}, {v: map[string]any{"twitter": "@a"}}, {v: "A"}},
	"keywords": {{v: absent}, {v: []any{}}, {v: []any{"a", "b"}}, {v: []any{"a", 1}}, {v: "a"}},
	"extensions": {{v: absent}, {v: map[string]any{}}, {v: map[string]any{"com.example.client": map[string]any{"x": []any{1}}}},
		{v: map[string]any{"com.example.client": 1}}, {v: map[string]any{"odd": map[string]any{}}}, {v: []any{}}, {v: "x"}},
	"skills":  {{v: absent}, {v: absent}, {v: "./skills"}},
	"unknown": {{v: absent}, {v: absent}, {v: map[string]any{}}},
}

var manifestOrder = []string{"$schema", "name", "version", "description", "homepage", "license", "author", "keywords", "extensions", "skills", "unknown"}

// TestDifferentialManifest checks generated manifests against the official
// plugin schema. The verdicts must agree exactly, once the two non-fatal
// exceptions of spec 5.2 and 8.1 are accounted for: a manifest with an
// unknown top-level field or a non-object "extensions" violates the schema,
// and is still loaded (with a warning).
func TestDifferentialManifest(t *testing.T) {
	schema := compileSchema(t, "plugin.schema.json")
	ours := []*jsonschema.Schema{compilePlugkitSchema(t, agentplugin.SchemaPlugin, false), compilePlugkitSchema(t, agentplugin.SchemaPlugin, true)}
	r := rand.New(rand.NewPCG(1, 2))
	agreeValid, agreeInvalid := 0, 0
	for i := range 3000 {
		var exceptions []string
		doc, _ := json.Marshal(build(r, manifestFields, manifestOrder, 0.85, &exceptions))
		valid := schemaValid(t, schema, doc)
		for _, o := range ours {
			if schemaValid(t, o, doc) != valid {
				t.Fatalf("case %d: official schema valid=%v, plugkit's schema differs\n%s", i, valid, doc)
			}
		}
		s, _ := snapshot.FromFiles(map[string][]byte{"plugin.json": doc})
		pkg, err := agentplugin.Load(s, agentplugin.Options{})
		loaded := err == nil
		nonFatal := 0
		if loaded {
			for _, d := range pkg.Diagnostics {
				if d.Code == agentplugin.CodeManifestUnknownField || d.Code == agentplugin.CodeManifestExtensionsNotObj {
					nonFatal++
				}
			}
		}
		conforms := loaded && nonFatal == 0
		if conforms != valid || (valid && !loaded) {
			t.Fatalf("case %d: schema valid=%v, plugkit loaded=%v conforms=%v\n%s\n%v", i, valid, loaded, conforms, doc, err)
		}
		if valid {
			agreeValid++
		} else {
			agreeInvalid++
		}
	}
	if agreeValid < 100 || agreeInvalid < 100 {
		t.Errorf("generator is lopsided: %d valid, %d invalid", agreeValid, agreeInvalid)
	}
}

// The exceptions where spec 7.2.1 text is stricter than mcp.schema.json.
const (
	exCommandToken = "7.2.1: command is one bare or ./ token, never absolute"
	exCwdEscape    = "7.2.1: cwd stays within its root after resolution"
	exURL          = "7.2.1: absolute http(s) URL, no userinfo, https off loopback"
	exHeader       = "7.2.1: header names and values are valid HTTP fields, unique ignoring case"
	exEnvName      = "plugkit: an env name must be settable (no '=', not empty)"
	exServerName   = "plugkit: a server name forms the ID PLUGIN/SERVER (no '/', not empty)"
)

var stdioFields = map[string][]choice{
	"type":    {{v: "stdio"}},
	"command": {{v: "node"}, {v: "./bin/x"}, {v: absent}, {v: ""}, {v: 1}, {v: "node server.js", exception: exCommandToken}, {v: "/usr/bin/node", exception: exCommandToken}},
	"args":    {{v: absent}, {v: []any{}}, {v: []any{"a", "", "${PLUGIN_ROOT}/x"}}, {v: []any{"a", 1}}, {v: "a"}},
	"env": {{v: absent}, {v: map[string]any{}}, {v: map[string]any{"A": "${PLUGIN_DATA}"}}, {v: map[string]any{"PLUGIN_ROOT": "x"}},
		{v: map[string]any{"PLUGIN_DATA": "x"}}, {v: map[string]any{"A": 1}}, {v: map[string]any{"A=B": "c"}, exception: exEnvName}},
	"cwd": {{v: absent}, {v: "./x"}, {v: "${PLUGIN_ROOT}"}, {v: "${PLUGIN_ROOT}/a"}, {v: "${PLUGIN_DATA}/x"}, {v: "x"}, {v: "/tmp"}, {v: "${PLUGIN_ROOT}x"}, {v: 5},
		{v: "./..", exception: exCwdEscape}, {v: "${PLUGIN_DATA}/..", exception: exCwdEscape}},
	"extra": {{v: absent}, {v: absent}, {v: "https://x.example"}},
}

var remoteFields = map[string][]choice{
	"type": {{v: "streamable-http"}, {v: "sse"}},
	"url": {{v: "https://x.example/mcp"}, {v: "http://localhost:8080/mcp"}, {v: "http://127.0.0.1/mcp"}, {v: absent}, {v: ""}, {v: 1},
		{v: "http://x.example/mcp", exception: exURL}, {v: "ftp://x.example", exception: exURL}, {v: "https://u@x.example", exception: exURL}, {v: "/mcp", exception: exURL}},
	"headers": {{v: absent}, {v: map[string]any{}}, {v: map[string]any{"X-A": "b"}}, {v: map[string]any{"X-A": 1}}, {v: []any{"a"}},
		{v: map[string]any{"X A": "b"}, exception: exHeader}, {v: map[string]any{"X-A": "a", "x-a": "b"}, exception: exHeader}},
	"extra": {{v: absent}, {v: absent}, {v: []any{"node"}}},
}

func genServer(r *rand.Rand, exceptions *[]string) any {
	switch r.IntN(10) {
	case 0:
		return "stdio"
	case 1:
		return map[string]any{"command": "node"}
	case 2:
		return map[string]any{"type": "websocket", "url": "https://x.example"}
	case 3, 4, 5:
		s := build(r, stdioFields, []string{"type", "command", "args", "env", "cwd", "extra"}, 0, exceptions)
		renameExtra(s, "url")
		return s
	default:
		s := build(r, remoteFields, []string{"type", "url", "headers", "extra"}, 0, exceptions)
		renameExtra(s, "args")
		return s
	}
}

// renameExtra turns the generated "extra" field into a field of another
// variant, which makes the entry invalid.
func renameExtra(s map[string]any, field string) {
	if v, ok := s["extra"]; ok {
		delete(s, "extra")
		s[field] = v
	}
}

// TestDifferentialMCP checks generated mcp.json documents against the
// official MCP schema. A document is valid for plugkit when MCP is
// configured and every entry loads. The verdicts agree exactly except where
// an entry uses one of the exceptions above, where the specification text
// is stricter than the schema: then plugkit must refuse the entry.
func TestDifferentialMCP(t *testing.T) {
	schema := compileSchema(t, "mcp.schema.json")
	ours := []*jsonschema.Schema{compilePlugkitSchema(t, agentplugin.SchemaMCP, false), compilePlugkitSchema(t, agentplugin.SchemaMCP, true)}
	r := rand.New(rand.NewPCG(3, 4))
	counts := map[bool]int{}
	for i := range 3000 {
		var exceptions []string
		doc := map[string]any{}
		switch r.IntN(12) {
		case 0:
		case 1:
			doc["$schema"] = manifestSchema
		default:
			doc["$schema"] = mcpSchema
		}
		servers := map[string]any{}
		for j := range r.IntN(4) {
			servers[string(rune('a'+j))] = genServer(r, &exceptions)
		}
		switch r.IntN(15) {
		case 0:
		case 1:
			doc["mcpServers"] = []any{}
		case 2:
			doc["mcpServers"] = servers
			doc["servers"] = map[string]any{}
		case 3:
			servers["a/b"] = map[string]any{"type": "stdio", "command": "node"}
			exceptions = append(exceptions, exServerName)
			doc["mcpServers"] = servers
		default:
			doc["mcpServers"] = servers
		}
		raw, _ := json.Marshal(doc)
		valid := schemaValid(t, schema, raw)
		// plugkit's schema says what the official one says, but for the
		// two rules of the specification's text it encodes.
		encoded := slices.ContainsFunc(exceptions, func(e string) bool { return e == exEnvName || e == exServerName })
		for _, o := range ours {
			if got := schemaValid(t, o, raw); got != (valid && !encoded) {
				t.Fatalf("case %d: official schema valid=%v (exceptions %v), plugkit's schema valid=%v\n%s", i, valid, exceptions, got, raw)
			}
		}
		s, _ := snapshot.FromFiles(map[string][]byte{"plugin.json": []byte(minimal), "mcp.json": raw})
		pkg, err := agentplugin.Load(s, agentplugin.Options{})
		if err != nil {
			t.Fatal(err)
		}
		entries := 0
		if m, ok := doc["mcpServers"].(map[string]any); ok {
			entries = len(m)
		}
		ours := pkg.MCP == agentplugin.MCPConfigured && len(pkg.Servers) == entries
		switch {
		case len(exceptions) > 0 && ours:
			t.Fatalf("case %d: plugkit accepted an entry the spec text forbids (%v)\n%s", i, exceptions, raw)
		case len(exceptions) == 0 && ours != valid:
			t.Fatalf("case %d: schema valid=%v, plugkit valid=%v\n%s\n%v", i, valid, ours, raw, codes(pkg.Diagnostics))
		}
		if len(exceptions) == 0 {
			counts[valid]++
		}
	}
	if counts[true] < 100 || counts[false] < 100 {
		t.Errorf("generator is lopsided: %v", counts)
	}
}
