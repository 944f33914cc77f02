package build

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
)

// TestSchemaPrintsPlugkitSchemas, through the
// CLI: plugkit schema prints the schema agentplugin.JSONSchema writes (the
// one the differential test holds to the official schemas), with plugkit's
// own $id; it compiles, and the example plugin's files are valid against
// it.
func TestSchemaPrintsPlugkitSchemas(t *testing.T) {
	for doc, file := range map[string]string{"plugin": "plugin.json", "mcp": "mcp.json"} {
		code, stdout, stderr := runCLI(t, "schema", doc)
		if code != 0 {
			t.Fatalf("schema %s: exit %d: %s", doc, code, stderr)
		}
		if code, versioned, _ := runCLI(t, "schema", doc, "--version", "1.0.0"); code != 0 || versioned != stdout {
			t.Errorf("schema %s --version 1.0.0: exit %d, another document than the newest version's", doc, code)
		}
		want, err := agentplugin.JSONSchema(doc, "1.0.0")
		if err != nil {
			t.Fatal(err)
		}
		var got, wantV any
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("schema %s: not one JSON document: %v", doc, err)
		}
		json.Unmarshal(want, &wantV)
		if !reflect.DeepEqual(got, wantV) {
			t.Errorf("schema %s prints another schema than agentplugin.JSONSchema", doc)
		}
		if id := got.(map[string]any)["$id"]; id != agentplugin.SchemaID(doc, "1.0.0") {
			t.Errorf("schema %s: $id %v", doc, id)
		}
		schema := compileString(t, agentplugin.SchemaID(doc, "1.0.0"), stdout)
		example, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "examples", "release-notes", file))
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(example))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(inst); err != nil {
			t.Errorf("the example's %s is invalid against plugkit's schema: %v", file, err)
		}
	}
}

func compileString(t *testing.T, id, doc string) *jsonschema.Schema {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(doc)))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(id, v); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSchemaVSCodeSettings: plugkit schema vscode registers each schema,
// inline, under the $schema identifier files declare, which VS Code reads
// first.
func TestSchemaVSCodeSettings(t *testing.T) {
	code, stdout, stderr := runCLI(t, "schema", "vscode")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var settings struct {
		Schemas []struct {
			URL    string         `json:"url"`
			Schema map[string]any `json:"schema"`
		} `json:"json.schemas"`
	}
	if err := json.Unmarshal([]byte(stdout), &settings); err != nil {
		t.Fatal(err)
	}
	ids, _ := agentplugin.Schemas("1.0.0")
	if len(settings.Schemas) != 2 || settings.Schemas[0].URL != ids.Manifest || settings.Schemas[1].URL != ids.MCP ||
		settings.Schemas[0].Schema["$id"] != agentplugin.SchemaID("plugin", "1.0.0") || settings.Schemas[1].Schema["$id"] != agentplugin.SchemaID("mcp", "1.0.0") {
		t.Errorf("settings: %s", stdout)
	}
}

func TestSchemaRefusals(t *testing.T) {
	for _, args := range [][]string{{"schema", "skill"}, {"schema"}, {"schema", "plugin", "mcp"}, {"schema", "plugin", "--version", "2.0.0"}} {
		if code, _, stderr := runCLI(t, args...); code != 2 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, stderr)
		}
	}
	code, stdout, _ := runCLI(t, "schema", "vscode", "--version", "2.0.0", "--json")
	var doc command.ErrorDoc
	if err := json.Unmarshal([]byte(stdout), &doc); code != 2 || err != nil || doc.Error.Code != "usage" {
		t.Errorf("--json failure: exit %d, %q", code, stdout)
	}
}
