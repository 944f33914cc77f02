package agentplugin_test

import (
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/snapshot"
)

// load loads in-memory files, executable when they start with "#!"; a
// rejection yields a nil package and its diagnostics.
func load(t *testing.T, files map[string]string) (*agentplugin.Package, []agentplugin.Diagnostic) {
	t.Helper()
	m, modes := map[string][]byte{}, map[string]fs.FileMode{}
	for p, c := range files {
		m[p] = []byte(c)
		if strings.HasPrefix(c, "#!") {
			modes[p] = 0o755
		}
	}
	s, err := snapshot.New(m, modes)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := agentplugin.Load(s, agentplugin.Options{})
	if ds, rejected := agentplugin.Diagnostics(err); rejected {
		return nil, ds
	}
	if err != nil {
		t.Fatal(err)
	}
	return pkg, pkg.Diagnostics
}

func firstCode(ds []agentplugin.Diagnostic) string {
	if len(ds) == 0 {
		return ""
	}
	return ds[0].Code
}

// serverVerdicts loads one server entry per case and returns, per case,
// the first diagnostic code ("" when the server loaded cleanly).
func serverCode(t *testing.T, entry string) (loaded bool, code string) {
	t.Helper()
	pkg, ds := load(t, map[string]string{"plugin.json": minimal, "mcp.json": mcpDoc(`"s": ` + entry), "bin/x": "#!/bin/sh\n"})
	return len(pkg.Servers) == 1, firstCode(ds)
}

func TestSpec5_5_PluginNameConstraints(t *testing.T) {
	for _, name := range []string{"my-plugin", "acme.tools", "lint3r", "a", "0", "a.b-c.d", "x-.y"} {
		if pkg, ds := load(t, map[string]string{"plugin.json": `{"$schema": "` + manifestSchema + `", "name": "` + name + `"}`}); pkg == nil {
			t.Errorf("%q rejected: %v", name, ds)
		}
	}
	for _, name := range []string{"My-Plugin", "-start", "end-", ".dot", "dot.", "has--double", "too.many..dots", "", "a_b", "a b", "ä", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"} {
		pkg, ds := load(t, map[string]string{"plugin.json": `{"$schema": "` + manifestSchema + `", "name": "` + name + `"}`})
		if pkg != nil || firstCode(ds) != agentplugin.CodeManifestName {
			t.Errorf("%q: loaded=%v %v", name, pkg != nil, codes(ds))
		}
	}
}

func TestSpec6_2_MissingLocationsAreNotErrors(t *testing.T) {
	pkg, ds := load(t, map[string]string{"plugin.json": minimal})
	if pkg == nil || len(ds) != 0 || pkg.MCP != agentplugin.MCPAbsent || len(pkg.Skills) != 0 {
		t.Errorf("diagnostics %v", codes(ds))
	}
}

func TestSpec7_1_ImmediateChildrenOnly(t *testing.T) {
	pkg, _ := load(t, map[string]string{
		"plugin.json":                 minimal,
		"skills/top/SKILL.md":         skillDoc("top"),
		"skills/top/nested/SKILL.md":  skillDoc("nested"),
		"skills/group/inner/SKILL.md": skillDoc("inner"),
		"SKILL.md":                    skillDoc("root"),
		"other/x/SKILL.md":            skillDoc("x"),
	})
	if got := skillIDs(pkg); !reflect.DeepEqual(got, []string{"demo/top"}) {
		t.Errorf("skills %v", got)
	}
	if _, ok := pkg.Skills[0].Files["nested/SKILL.md"]; !ok {
		t.Error("a nested SKILL.md is a resource of the skill above it")
	}
}

func TestSpec7_2_1_CommandIsOneToken(t *testing.T) {
	for entry, want := range map[string]string{
		`{"type": "stdio", "command": "node"}`:                 "",
		`{"type": "stdio", "command": "./bin/x"}`:              "",
		`{"type": "stdio", "command": "./bin/../bin/x"}`:       "",
		`{"type": "stdio", "command": "my-server.exe"}`:        "",
		`{"type": "stdio", "command": "node index.js"}`:        agentplugin.CodeCommandInvalid,
		`{"type": "stdio", "command": "node\tx"}`:              agentplugin.CodeCommandInvalid,
		`{"type": "stdio", "command": "/usr/bin/node"}`:        agentplugin.CodeCommandInvalid,
		`{"type": "stdio", "command": "bin/x"}`:                agentplugin.CodeCommandInvalid,
		`{"type": "stdio", "command": "${PLUGIN_ROOT}/bin/x"}`: agentplugin.CodeCommandInvalid,
		`{"type": "stdio", "command": "${PLUGIN_DATA}"}`:       agentplugin.CodeCommandInvalid,
		`{"type": "stdio", "command": "./"}`:                   agentplugin.CodeCommandInvalid,
		`{"type": "stdio", "command": "../x"}`:                 agentplugin.CodeCommandEscapes,
		`{"type": "stdio", "command": "./../x"}`:               agentplugin.CodeCommandEscapes,
	} {
		loaded, code := serverCode(t, entry)
		if code != want || loaded != (want == "") {
			t.Errorf("%s: loaded=%v code %q, want %q", entry, loaded, code, want)
		}
	}
}

func TestSpec7_2_1_CwdForms(t *testing.T) {
	for cwd, want := range map[string]string{
		"./":                        "",
		"./a/b":                     "",
		"${PLUGIN_ROOT}":            "",
		"${PLUGIN_ROOT}/":           "",
		"${PLUGIN_ROOT}/a":          "",
		"${PLUGIN_DATA}":            "",
		"${PLUGIN_DATA}/a/../b":     "",
		".":                         agentplugin.CodeCwdInvalid,
		"a":                         agentplugin.CodeCwdInvalid,
		"/abs":                      agentplugin.CodeCwdInvalid,
		"$PLUGIN_ROOT":              agentplugin.CodeCwdInvalid,
		"${PLUGIN_ROOT_SUFFIX}":     agentplugin.CodeCwdInvalid,
		"${plugin_root}":            agentplugin.CodeCwdInvalid,
		".\\a":                      agentplugin.CodeCwdInvalid,
		"./..":                      agentplugin.CodeCwdEscapes,
		"./a/../..":                 agentplugin.CodeCwdEscapes,
		"${PLUGIN_ROOT}/..":         agentplugin.CodeCwdEscapes,
		"${PLUGIN_DATA}/..":         agentplugin.CodeCwdEscapes,
		"${PLUGIN_DATA}/a/../../..": agentplugin.CodeCwdEscapes,
	} {
		loaded, code := serverCode(t, `{"type": "stdio", "command": "node", "cwd": "`+jsonEscape(cwd)+`"}`)
		if code != want || loaded != (want == "") {
			t.Errorf("cwd %q: loaded=%v code %q, want %q", cwd, loaded, code, want)
		}
	}
}

func jsonEscape(s string) string {
	out := ""
	for _, r := range s {
		if r == '\\' || r == '"' {
			out += `\`
		}
		out += string(r)
	}
	return out
}

func TestSpec7_2_1_RemoteEndpoints(t *testing.T) {
	for url, want := range map[string]string{
		"https://x.example/mcp":     "",
		"HTTPS://x.example/mcp":     "",
		"http://localhost/mcp":      "",
		"http://localhost:1/mcp":    "",
		"http://127.0.0.1/mcp":      "",
		"http://127.255.255.254/":   "",
		"http://[::1]/mcp":          "",
		"http://x.example/mcp":      agentplugin.CodeURLInsecure,
		"http://128.0.0.1/":         agentplugin.CodeURLInsecure,
		"http://[::2]/":             agentplugin.CodeURLInsecure,
		"http://localhost.:80/":     agentplugin.CodeURLInsecure,
		"https://user@x.example/":   agentplugin.CodeURLInvalid,
		"https://x.example/#frag":   agentplugin.CodeURLInvalid,
		"x.example/mcp":             agentplugin.CodeURLInvalid,
		"ws://x.example/":           agentplugin.CodeURLInvalid,
		"https:x.example":           agentplugin.CodeURLInvalid,
		"https://x.example:port/":   agentplugin.CodeURLInvalid,
		"https://x.example/\x7fabc": agentplugin.CodeURLInvalid,
	} {
		for _, typ := range []string{"streamable-http", "sse"} {
			loaded, code := serverCode(t, `{"type": "`+typ+`", "url": "`+jsonEscape(url)+`"}`)
			if code != want || loaded != (want == "") {
				t.Errorf("%s %q: loaded=%v code %q, want %q", typ, url, loaded, code, want)
			}
		}
	}
}

func TestSpec7_2_1_HeaderFields(t *testing.T) {
	for headers, want := range map[string]string{
		`{"X-A": "b", "Accept-Language": "en, fr;q=0.5", "X-Empty": ""}`: "",
		`{"X-A": "a\u00e9"}`:          "",
		`{"X-A": "a\tb c"}`:           "",
		`{"": "b"}`:                   agentplugin.CodeHeaderInvalid,
		`{"X:A": "b"}`:                agentplugin.CodeHeaderInvalid,
		`{"X-A": "b\r\nX-B: c"}`:      agentplugin.CodeHeaderInvalid,
		`{"X-A": "b\u0000"}`:          agentplugin.CodeHeaderInvalid,
		`{"X-A": "b "}`:               agentplugin.CodeHeaderInvalid,
		`{"X-A": "\u007f"}`:           agentplugin.CodeHeaderInvalid,
		`{"X-A": "a", "x-A": "b"}`:    agentplugin.CodeHeaderDuplicate,
		`{"Authorization": "Bearer"}`: "",
	} {
		loaded, code := serverCode(t, `{"type": "streamable-http", "url": "https://x.example", "headers": `+headers+`}`)
		if code != want || loaded != (want == "") {
			t.Errorf("%s: loaded=%v code %q, want %q", headers, loaded, code, want)
		}
	}
}

func TestSpec8_1_ExtensionValuesOpaque(t *testing.T) {
	pkg, ds := load(t, map[string]string{"plugin.json": `{"$schema": "` + manifestSchema + `", "name": "demo",
		"extensions": {"com.example.client": {"name": 5, "$schema": [], "extensions": "x"}, "org.other": {}}}`})
	if pkg == nil || len(ds) != 0 || !reflect.DeepEqual(pkg.Extensions, []string{"com.example.client", "org.other"}) {
		t.Fatalf("diagnostics %v", codes(ds))
	}
	if got := string(pkg.ExtensionData["com.example.client"]); got != `{"name": 5, "$schema": [], "extensions": "x"}` {
		t.Errorf("extension data changed: %s", got)
	}
}

func TestSpec8_2_ExtensionDirectories(t *testing.T) {
	pkg, _ := load(t, map[string]string{"plugin.json": minimal, "com.example.client/x": "", "io.github.user-x/y/z": "",
		"com.example.file": "a file", "skills.d/x": "", "a1.b/x": "", "docs/x": ""})
	if want := []string{"com.example.client", "io.github.user-x", "skills.d"}; !reflect.DeepEqual(pkg.ExtensionDirectories, want) {
		t.Errorf("extension directories %v, want %v", pkg.ExtensionDirectories, want)
	}
}

func TestSpec9_2_ReservedEnvNames(t *testing.T) {
	for env, want := range map[string]string{
		`{"PLUGIN_ROOT": "x"}`:                                            agentplugin.CodeEnvReserved,
		`{"PLUGIN_DATA": "${PLUGIN_DATA}"}`:                               agentplugin.CodeEnvReserved,
		`{"PLUGIN_ROOT_DIR": "x", "plugin_root": "x", "HOME": "${HOME}"}`: "",
	} {
		loaded, code := serverCode(t, `{"type": "stdio", "command": "node", "env": `+env+`}`)
		if code != want || loaded != (want == "") {
			t.Errorf("%s: loaded=%v code %q, want %q", env, loaded, code, want)
		}
	}
}

// TestSpec11_3_FailuresIsolated: a failure in one component type or entry
// never rejects the plugin nor hides independent components.
func TestSpec11_3_FailuresIsolated(t *testing.T) {
	pkg, ds := load(t, map[string]string{
		"plugin.json":         minimal,
		"skills/ok/SKILL.md":  skillDoc("ok"),
		"skills/bad/SKILL.md": "---\nname: bad\n---\n",
		"mcp.json":            mcpDoc(`"ok": {"type": "stdio", "command": "node"}, "bad": {"type": "stdio"}, "worse": 5`),
		"hooks/hooks.json":    "{}",
	})
	if pkg == nil || !reflect.DeepEqual(skillIDs(pkg), []string{"demo/ok"}) || !reflect.DeepEqual(serverIDs(pkg), []string{"demo/ok"}) || len(ds) != 3 {
		t.Errorf("skills %v servers %v diagnostics %v", skillIDs(pkg), serverIDs(pkg), codes(ds))
	}
}

func TestSpec5_1_ManifestRequiredAtRoot(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"absent":         {"README.md": "x"},
		"nested only":    {"config/plugin.json": minimal},
		"other case":     {"Plugin.json": minimal},
		"a directory":    {"plugin.json/x": minimal},
		"other manifest": {".claude-plugin/plugin.json": minimal},
	} {
		if pkg, ds := load(t, files); pkg != nil || len(ds) != 1 {
			t.Errorf("%s: loaded=%v %v", name, pkg != nil, codes(ds))
		}
	}
}

func TestSpec5_3_RequiredFields(t *testing.T) {
	for doc, want := range map[string]string{
		`{"name": "demo"}`:                                  agentplugin.CodeManifestRequired,
		`{"$schema": "` + manifestSchema + `"}`:             agentplugin.CodeManifestRequired,
		`{"$schema": "` + manifestSchema + `", "name": ""}`: agentplugin.CodeManifestName,
		`{"$schema": "` + manifestSchema + `", "name": 1}`:  agentplugin.CodeManifestType,
		`{"$schema": null, "name": "demo"}`:                 agentplugin.CodeManifestType,
		`{"$schema": "", "name": "demo"}`:                   agentplugin.CodeManifestSchema,
	} {
		pkg, ds := load(t, map[string]string{"plugin.json": doc, "skills/a/SKILL.md": skillDoc("a")})
		if pkg != nil || firstCode(ds) != want {
			t.Errorf("%s: loaded=%v %v, want %s", doc, pkg != nil, codes(ds), want)
		}
	}
}

func TestSpec5_4_MetadataValidatedByTypeOnly(t *testing.T) {
	pkg, ds := load(t, map[string]string{"plugin.json": `{"$schema": "` + manifestSchema + `", "name": "demo",
		"version": "not-semver", "homepage": "::", "repository": "", "license": "Custom license, see LICENSE",
		"author": {"email": "not an email", "url": "not a url"}, "keywords": []}`})
	if pkg == nil || len(ds) != 0 || pkg.Version != "not-semver" || pkg.Author.Email != "not an email" {
		t.Errorf("diagnostics %v", codes(ds))
	}
	for _, field := range []string{`"version": 1`, `"description": null`, `"homepage": true`, `"repository": {}`,
		`"license": []`, `"keywords": [null]`, `"author": {"name": "a", "x": "y"}`, `"author": []`} {
		pkg, ds := load(t, map[string]string{"plugin.json": `{"$schema": "` + manifestSchema + `", "name": "demo", ` + field + `}`})
		if pkg != nil || len(ds) != 1 {
			t.Errorf("%s: loaded=%v %v", field, pkg != nil, codes(ds))
		}
	}
}

func TestSpec7_2_1_DocumentRules(t *testing.T) {
	for doc, want := range map[string]string{
		`{"$schema": "` + mcpSchema + `", "mcpServers": {}}`: "",
		`{"mcpServers": {}}`:                                                   agentplugin.CodeMCPRequired,
		`{"$schema": "` + mcpSchema + `"}`:                                     agentplugin.CodeMCPRequired,
		`{"$schema": "` + mcpSchema + `", "mcpServers": []}`:                   agentplugin.CodeMCPServersType,
		`{"$schema": "` + mcpSchema + `", "mcpServers": {}, "x": 1}`:           agentplugin.CodeMCPUnknownField,
		`{"$schema": "` + manifestSchema + `", "mcpServers": {}}`:              agentplugin.CodeMCPSchema,
		`{"$schema": "` + mcpSchema + `", "mcpServers": {}, "mcpServers": {}}`: agentplugin.CodeMCPDuplicateKey,
		`{"$schema": "` + mcpSchema + `", "mcpServers": {},}`:                  agentplugin.CodeMCPJSON,
		`[]`: agentplugin.CodeMCPNotObject,
	} {
		pkg, ds := load(t, map[string]string{"plugin.json": minimal, "mcp.json": doc, "skills/a/SKILL.md": skillDoc("a")})
		wantState := agentplugin.MCPDisabled
		if want == "" {
			wantState = agentplugin.MCPConfigured
		}
		// 7.2.2(2): a bad document disables MCP only; the skill still loads.
		if pkg == nil || firstCode(ds) != want || pkg.MCP != wantState || len(pkg.Skills) != 1 {
			t.Errorf("%s: %v", doc, codes(ds))
		}
	}
}
