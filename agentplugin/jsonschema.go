package agentplugin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/plugkit/plugkit/internal/jsontree"
)

// The documents JSONSchema describes.
const (
	SchemaPlugin = "plugin" // plugin.json
	SchemaMCP    = "mcp"    // mcp.json
)

// SchemaID is the $id of plugkit's JSON Schema of document in version. It
// is plugkit's own identifier, never the canonical one of the
// specification's schemas: spec 10.1 keeps a schema identifier to one
// content, and this content is plugkit's.
func SchemaID(document, version string) string {
	return "urn:plugkit:agent-plugins:" + version + ":" + document + ".schema.json"
}

// JSONSchema returns a JSON Schema (draft 2020-12) of document, SchemaPlugin
// or SchemaMCP, in the Agent Plugins version given, for editors and other
// tools to check files offline. It is written from the rules Load applies
// to types and fields, and accepts exactly the documents the official
// schemas accept, but for two rules of the specification's text it adds
// (a server name holds no '/' and is not empty; an env name holds no '='
// and is not empty). The rest of the text (paths that escape the root,
// URLs, headers, commands) only plugkit validate checks.
func JSONSchema(document, version string) ([]byte, error) {
	var v *specVersion
	for i := range specVersions {
		if specVersions[i].Version == version {
			v = &specVersions[i]
		}
	}
	if v == nil {
		return nil, fmt.Errorf("unsupported Agent Plugins version %q (supported: %s)", version, strings.Join(SupportedVersions(), ", "))
	}
	var r *rule
	var title string
	switch document {
	case SchemaPlugin:
		r, title = manifestRule(v), "plugin.json"
	case SchemaMCP:
		r, title = mcpRule(v), "mcp.json"
	default:
		return nil, fmt.Errorf("unknown document %q (%s or %s)", document, SchemaPlugin, SchemaMCP)
	}
	root := object{
		{"$schema", "https://json-schema.org/draft/2020-12/schema"},
		{"$id", SchemaID(document, version)},
		{"title", "Agent Plugins " + version + " " + title + ", as plugkit validates it"},
	}
	root = append(root, schemaOf(r)...)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// schemaOf writes rule r as the keywords of a JSON Schema.
func schemaOf(r *rule) object {
	var o object
	if r.description != "" {
		o = append(o, member{"description", r.description})
	}
	if r.variants != nil {
		variants := make([]object, len(r.variants))
		for i, v := range r.variants {
			variants[i] = schemaOf(v)
		}
		return append(o, member{"oneOf", variants})
	}
	o = append(o, member{"type", kindNames[r.kind]})
	switch r.kind {
	case jsontree.String:
		if r.constant != "" {
			o = append(o, member{"const", r.constant})
		}
		if r.minLength > 0 {
			o = append(o, member{"minLength", r.minLength})
		}
		if r.maxLength > 0 {
			o = append(o, member{"maxLength", r.maxLength})
		}
		if r.pattern != "" {
			o = append(o, member{"pattern", r.pattern})
		}
	case jsontree.Array:
		o = append(o, member{"items", schemaOf(r.items)})
	case jsontree.Object:
		if r.fields != nil {
			props := object{}
			var required []string
			for _, f := range r.fields {
				props = append(props, member{f.name, schemaOf(f.rule)})
				if f.required {
					required = append(required, f.name)
				}
			}
			o = append(o, member{"properties", props})
			if required != nil {
				o = append(o, member{"required", required})
			}
			return append(o, member{"additionalProperties", false})
		}
		if r.names != nil || r.reserved != nil {
			names := object{}
			if r.names != nil && r.names.pattern != "" {
				names = append(names, member{"pattern", r.names.pattern})
			}
			if r.reserved != nil {
				names = append(names, member{"not", object{{"enum", r.reserved}}})
			}
			o = append(o, member{"propertyNames", names})
		}
		if r.values != nil {
			o = append(o, member{"additionalProperties", schemaOf(r.values)})
		}
	}
	return o
}

// kindNames are the JSON Schema type names of the JSON kinds.
var kindNames = [...]string{
	jsontree.Null: "null", jsontree.Bool: "boolean", jsontree.Number: "number",
	jsontree.String: "string", jsontree.Array: "array", jsontree.Object: "object",
}

// object is a JSON object whose members keep their order when marshalled,
// so that a schema reads $schema, $id and title first.
type object []member

type member struct {
	name  string
	value any
}

// MarshalJSON writes the members in order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		for _, v := range []any{m.name, m.value} {
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(v); err != nil {
				return nil, err
			}
			b.Truncate(b.Len() - 1) // Encode's newline
			if v == any(m.name) {
				b.WriteByte(':')
			}
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
