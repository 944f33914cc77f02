// Package hostile builds expensive plugin inputs of a chosen size, for the
// tests and benchmarks that show validation costs what the input's size
// costs whatever its shape. Each shape stresses one part of the loader: a
// wide object, a long array, deep nesting, escapes, one diagnostic per
// element.
package hostile

import (
	"bytes"
	"strconv"
)

// The $schema identifiers the generated documents use.
const (
	ManifestSchema = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json"
	MCPSchema      = "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json"
)

// Minimal is a valid manifest, for shapes that fill mcp.json.
var Minimal = []byte(`{"$schema": "` + ManifestSchema + `", "name": "demo"}`)

// Shape is one way of filling a JSON document to a given size.
type Shape struct {
	Name string // short and stable: benchmarks and test names use it
	File string // "plugin.json" or "mcp.json"
	// Rejected tells that the plugin is refused (its errors are the
	// shape's point); every other shape loads, so that a benchmark or a
	// test that sees another outcome measured something else.
	Rejected bool
	// body writes the repeated part; fill calls it until the document
	// reaches its size.
	open, close string
	item        func(b *bytes.Buffer, i int)
}

// Files returns the plugin's files with the shape's document of about size
// bytes (never less) and, for an mcp.json shape, a minimal manifest.
func (s Shape) Files(size int) map[string][]byte {
	files := map[string][]byte{s.File: s.Document(size)}
	if s.File == "mcp.json" {
		files["plugin.json"] = Minimal
	}
	return files
}

// Document returns the shape's document of at least size bytes.
func (s Shape) Document(size int) []byte {
	var b bytes.Buffer
	b.Grow(size + 256)
	b.WriteString(s.open)
	for i := 0; b.Len()+len(s.close) < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		s.item(&b, i)
	}
	b.WriteString(s.close)
	return b.Bytes()
}

// manifestOpen starts a valid manifest whose last member is left open.
const manifestOpen = `{"$schema": "` + ManifestSchema + `", "name": "demo", `

// mcpServerOpen starts mcp.json with one stdio server whose last member is
// left open.
const mcpServerOpen = `{"$schema": "` + MCPSchema + `", "mcpServers": {"s": {"type": "stdio", "command": "node", `

// Shapes are the JSON shapes, for plugin.json and mcp.json.
var Shapes = []Shape{
	{Name: "manifest-unknown-fields", File: "plugin.json", open: manifestOpen, close: `}`,
		// A valid plugin: every field is an unknown-field warning.
		item: func(b *bytes.Buffer, i int) { b.WriteString(`"f`); writeInt(b, i); b.WriteString(`":0`) }},
	{Name: "manifest-long-array", File: "plugin.json", open: manifestOpen + `"x": [`, close: `]}`,
		item: func(b *bytes.Buffer, i int) { b.WriteByte('0') }},
	{Name: "manifest-deep-nesting", File: "plugin.json", open: manifestOpen + `"x": [`, close: `]}`,
		item: func(b *bytes.Buffer, i int) { b.WriteString(deep) }},
	{Name: "manifest-small-objects", File: "plugin.json", open: manifestOpen + `"x": [`, close: `]}`,
		item: func(b *bytes.Buffer, i int) { b.WriteString(`{"a":0,"b":1}`) }},
	{Name: "manifest-escaped-strings", File: "plugin.json", open: manifestOpen + `"x": [`, close: `]}`,
		item: func(b *bytes.Buffer, i int) { b.WriteString(`"\u00e9\n\ud83d\ude00"`) }},
	{Name: "manifest-keyword-errors", File: "plugin.json", Rejected: true, open: manifestOpen + `"keywords": [`, close: `]}`,
		// Rejected: every keyword is an error diagnostic.
		item: func(b *bytes.Buffer, i int) { b.WriteByte('0') }},
	{Name: "manifest-wide-extension", File: "plugin.json", open: manifestOpen + `"extensions": {"com.example.x": {`, close: `}}}`,
		item: func(b *bytes.Buffer, i int) { b.WriteString(`"k`); writeInt(b, i); b.WriteString(`":0`) }},
	{Name: "mcp-arg-errors", File: "mcp.json", open: mcpServerOpen + `"args": [`, close: `]}}}`,
		// Every argument is an error diagnostic.
		item: func(b *bytes.Buffer, i int) { b.WriteByte('0') }},
	{Name: "mcp-many-servers", File: "mcp.json", open: `{"$schema": "` + MCPSchema + `", "mcpServers": {`, close: `}}`,
		// Past MaxServers the rest are skipped.
		item: func(b *bytes.Buffer, i int) {
			b.WriteString(`"s`)
			writeInt(b, i)
			b.WriteString(`":{"type":"stdio","command":"node"}`)
		}},
	{Name: "mcp-wide-env", File: "mcp.json", open: mcpServerOpen + `"env": {`, close: `}}}}`,
		item: func(b *bytes.Buffer, i int) { b.WriteString(`"E`); writeInt(b, i); b.WriteString(`":"v"`) }},
	{Name: "mcp-unknown-server-fields", File: "mcp.json", open: mcpServerOpen, close: `}}}`,
		// Every field is an error diagnostic.
		item: func(b *bytes.Buffer, i int) { b.WriteString(`"f`); writeInt(b, i); b.WriteString(`":0`) }},
}

// deep is one array nested 60 levels, within the default depth limit.
var deep = string(bytes.Repeat([]byte("["), 60)) + "0" + string(bytes.Repeat([]byte("]"), 60))

func writeInt(b *bytes.Buffer, i int) {
	var tmp [20]byte
	b.Write(strconv.AppendInt(tmp[:0], int64(i), 36))
}
