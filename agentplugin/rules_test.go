package agentplugin

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestPluginNamePatternIsCheckPluginName: the name pattern plugkit's schema
// gives editors accepts exactly the names the loader accepts (spec 5.5).
func TestPluginNamePatternIsCheckPluginName(t *testing.T) {
	re := regexp.MustCompile(pluginNamePattern)
	r := rand.New(rand.NewPCG(5, 6))
	const alphabet = "ab09.-.-A_ "
	names := []string{"", "a", "a.b", "a-b", "a.-b", "a-.b", "a.-.-b", "a--b", "a..b", "-a", "a-", ".a", "a.", strings.Repeat("a", 64), strings.Repeat("a", 65)}
	for range 200_000 {
		var b strings.Builder
		for range r.IntN(9) {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		names = append(names, b.String())
	}
	for _, name := range names {
		schema := re.MatchString(name) && len(name) >= 1 && len(name) <= 64
		if loader := checkPluginName(name) == ""; schema != loader {
			t.Fatalf("%q: schema accepts it %v, the loader %v", name, schema, loader)
		}
	}
}

// TestJSONSchemaIdentity: plugkit's schemas carry plugkit's own $id, never
// the canonical identifier (spec 10.1), and only supported documents and
// versions have one.
func TestJSONSchemaIdentity(t *testing.T) {
	for _, v := range specVersions {
		for _, doc := range []string{SchemaPlugin, SchemaMCP} {
			b, err := JSONSchema(doc, v.Version)
			if err != nil {
				t.Fatal(err)
			}
			id := SchemaID(doc, v.Version)
			if id == v.ManifestSchema || id == v.MCPSchema || !strings.Contains(string(b), `"$id": "`+id+`"`) {
				t.Errorf("%s %s: $id %q", doc, v.Version, id)
			}
		}
	}
	if _, err := JSONSchema("skill", "1.0.0"); err == nil || !strings.Contains(err.Error(), "plugin or mcp") {
		t.Errorf("unknown document: %v", err)
	}
	if _, err := JSONSchema(SchemaPlugin, "9.9.9"); err == nil || !strings.Contains(err.Error(), "supported: 1.0.0") {
		t.Errorf("unknown version: %v", err)
	}
}
