package agentplugin_test

import (
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/snapshot"
)

// checkInvariants holds for any input: Load never panics, a rejection
// carries an error diagnostic, and every diagnostic has a code and a message.
func checkInvariants(t *testing.T, files map[string][]byte) {
	s, err := snapshot.FromFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := agentplugin.Load(s, agentplugin.Options{Limits: agentplugin.Limits{MaxDiagnostics: 50}})
	ds, rejected := agentplugin.Diagnostics(err)
	switch {
	case err != nil && !rejected:
		t.Fatalf("unexpected error: %v", err)
	case rejected && !agentplugin.HasErrors(ds):
		t.Fatalf("rejected without an error diagnostic: %v", ds)
	case pkg != nil:
		ds = pkg.Diagnostics
	}
	if len(ds) > 51 {
		t.Fatalf("%d diagnostics past the limit", len(ds))
	}
	for _, d := range ds {
		if d.Code == "" || d.Message == "" || (d.Severity != agentplugin.Error && d.Severity != agentplugin.Warning) {
			t.Fatalf("malformed diagnostic %+v", d)
		}
	}
}

func FuzzManifest(f *testing.F) {
	for _, seed := range []string{
		minimal,
		`{"$schema": "` + manifestSchema + `", "name": "a", "author": {"name": "x"}, "keywords": ["a"], "extensions": {"com.x.y": {}}}`,
		`{"$schema": "` + manifestSchema + `", "name": "a", "name": "b"}`,
		`{"$schema": 1}`, `[]`, `{`, `{"a": "\ud800"}`, `"\u0000"`, `{"$schema": "` + manifestSchema + `", "name": "a", "x": [[[[]]]]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkInvariants(t, map[string][]byte{"plugin.json": doc})
	})
}

func FuzzMCP(f *testing.F) {
	for _, seed := range []string{
		mcpDoc(`"a": {"type": "stdio", "command": "./bin/x", "args": ["${PLUGIN_ROOT}"], "env": {"A": "b"}, "cwd": "${PLUGIN_DATA}/x"}`),
		mcpDoc(`"b": {"type": "streamable-http", "url": "https://x.example/mcp", "headers": {"X-A": "b"}}`),
		mcpDoc(`"c": {"type": "sse", "url": "http://[::1]:80/sse"}, "d": {"type": "stdio", "command": "./../x", "cwd": "./.."}`),
		mcpDoc(`"": 1, "a/b": {"type": 1}`), `{"$schema": "x"}`, `nul`, `{"mcpServers": {"a": {"a": {"a": {}}}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkInvariants(t, map[string][]byte{"plugin.json": []byte(minimal), "mcp.json": doc, "bin/x": nil})
	})
}
