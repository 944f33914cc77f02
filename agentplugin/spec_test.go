package agentplugin_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/internal/testtree"
	"github.com/plugkit/plugkit/skill"
	"github.com/plugkit/plugkit/snapshot"
)

const (
	manifestSchema = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json"
	mcpSchema      = "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json"
	minimal        = `{"$schema": "` + manifestSchema + `", "name": "demo"}`
)

func skillDoc(name string) string {
	return "---\nname: " + name + "\ndescription: Does " + name + ". Use when testing.\n---\nBody of " + name + ".\n"
}

func mcpDoc(servers string) string {
	return `{"$schema": "` + mcpSchema + `", "mcpServers": {` + servers + `}}`
}

// write lays out a plugin under parent/plugin (entries as testtree.Write
// takes them) and the entries of outside under parent/outside.
func write(t *testing.T, inside, outside map[string]string) string {
	t.Helper()
	parent := t.TempDir()
	testtree.Write(t, filepath.Join(parent, "outside"), outside)
	root := filepath.Join(parent, "plugin")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	testtree.Write(t, root, inside)
	return root
}

func loadDir(t *testing.T, dir string, opts agentplugin.Options) (*agentplugin.Package, []agentplugin.Diagnostic) {
	t.Helper()
	pkg, err := agentplugin.LoadDir(dir, opts)
	if ds, rejected := agentplugin.Diagnostics(err); rejected {
		return nil, ds
	}
	if err != nil {
		t.Fatal(err)
	}
	return pkg, pkg.Diagnostics
}

func codes(ds []agentplugin.Diagnostic) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, string(d.Severity)+" "+d.Code+" "+d.Path)
	}
	return out
}

func ids[T any](xs []T, id func(T) string) []string {
	out := []string{}
	for _, x := range xs {
		out = append(out, id(x))
	}
	return out
}

func skillIDs(p *agentplugin.Package) []string {
	return ids(p.Skills, func(s agentplugin.Skill) string { return s.ID })
}

func serverIDs(p *agentplugin.Package) []string {
	return ids(p.Servers, func(s agentplugin.Server) string { return s.ID })
}

// TestSpec4_1_FailureBoundaries applies each of the five narrowest failure
// boundaries of section 4.1 to links that leave the root.
func TestSpec4_1_FailureBoundaries(t *testing.T) {
	secretSkill := skillDoc("stolen")
	outside := map[string]string{
		"plugin.json":         minimal,
		"skills/x/SKILL.md":   skillDoc("x"),
		"stolen/SKILL.md":     secretSkill,
		"SKILL.md":            skillDoc("linked"),
		"mcp.json":            mcpDoc(""),
		"bin/server":          "#!/bin/sh\n",
		"data/file":           "x",
		"notes.txt":           "secret",
		"resources/notes.txt": "secret",
	}
	goodSkill := map[string]string{"skills/good/SKILL.md": skillDoc("good")}
	with := func(m map[string]string) map[string]string {
		out := map[string]string{"plugin.json": minimal}
		for k, v := range goodSkill {
			out[k] = v
		}
		for k, v := range m {
			out[k] = v
		}
		return out
	}

	t.Run("1 manifest escapes: reject", func(t *testing.T) {
		pkg, ds := loadDir(t, write(t, map[string]string{"plugin.json@": "../outside/plugin.json"}, outside), agentplugin.Options{})
		if pkg != nil || !reflect.DeepEqual(codes(ds), []string{"error manifest-escapes-root plugin.json"}) {
			t.Fatalf("pkg %v, diagnostics %v", pkg, codes(ds))
		}
	})
	t.Run("1 manifest link inside: load", func(t *testing.T) {
		pkg, ds := loadDir(t, write(t, map[string]string{"real.json": minimal, "plugin.json@": "real.json"}, nil), agentplugin.Options{})
		if pkg == nil || len(ds) != 0 {
			t.Fatalf("pkg %v, diagnostics %v", pkg, codes(ds))
		}
	})
	t.Run("1 manifest fifo: reject", func(t *testing.T) {
		pkg, ds := loadDir(t, write(t, map[string]string{"plugin.json|": ""}, nil), agentplugin.Options{})
		if pkg != nil || !reflect.DeepEqual(codes(ds), []string{"error manifest-not-file plugin.json"}) {
			t.Fatalf("pkg %v, diagnostics %v", pkg, codes(ds))
		}
	})
	t.Run("2 skills location escapes: skills invalid, MCP loads", func(t *testing.T) {
		pkg, ds := loadDir(t, write(t, map[string]string{"plugin.json": minimal, "skills@": "../outside/skills",
			"mcp.json": mcpDoc(`"s": {"type": "stdio", "command": "node"}`)}, outside), agentplugin.Options{})
		if pkg == nil || len(pkg.Skills) != 0 || !reflect.DeepEqual(serverIDs(pkg), []string{"demo/s"}) ||
			!reflect.DeepEqual(codes(ds), []string{"error skills-escapes-root skills"}) {
			t.Fatalf("diagnostics %v", codes(ds))
		}
	})
	t.Run("2 mcp.json escapes: MCP disabled, skills load", func(t *testing.T) {
		pkg, ds := loadDir(t, write(t, with(map[string]string{"mcp.json@": "../outside/mcp.json"}), outside), agentplugin.Options{})
		if pkg == nil || pkg.MCP != agentplugin.MCPDisabled || !reflect.DeepEqual(skillIDs(pkg), []string{"demo/good"}) ||
			!reflect.DeepEqual(codes(ds), []string{"error mcp-escapes-root mcp.json"}) {
			t.Fatalf("diagnostics %v", codes(ds))
		}
	})
	t.Run("2 mcp.json fifo: MCP disabled", func(t *testing.T) {
		pkg, ds := loadDir(t, write(t, with(map[string]string{"mcp.json|": ""}), nil), agentplugin.Options{})
		if pkg == nil || pkg.MCP != agentplugin.MCPDisabled || !reflect.DeepEqual(codes(ds), []string{"error mcp-not-file mcp.json"}) {
			t.Fatalf("diagnostics %v", codes(ds))
		}
	})
	t.Run("3 SKILL.md escapes: that skill skipped", func(t *testing.T) {
		pkg, ds := loadDir(t, write(t, with(map[string]string{"skills/linked/SKILL.md@": "../../../outside/SKILL.md"}), outside), agentplugin.Options{})
		if pkg == nil || !reflect.DeepEqual(skillIDs(pkg), []string{"demo/good"}) ||
			!reflect.DeepEqual(codes(ds), []string{"error skill-escapes-root skills/linked/SKILL.md"}) {
			t.Fatalf("skills %v diagnostics %v", skillIDs(pkg), codes(ds))
		}
	})
	t.Run("3 skill directory escapes: that skill skipped", func(t *testing.T) {
		pkg, ds := loadDir(t, write(t, with(map[string]string{"skills/stolen@": "../../outside/stolen"}), outside), agentplugin.Options{})
		if pkg == nil || !reflect.DeepEqual(skillIDs(pkg), []string{"demo/good"}) ||
			!reflect.DeepEqual(codes(ds), []string{"error skill-escapes-root skills/stolen"}) {
			t.Fatalf("skills %v diagnostics %v", skillIDs(pkg), codes(ds))
		}
	})
	t.Run("3 SKILL.md link inside: loads", func(t *testing.T) {
		pkg, ds := loadDir(t, write(t, with(map[string]string{"docs/SKILL.md": skillDoc("linked"), "skills/linked/SKILL.md@": "../../docs/SKILL.md"}), nil), agentplugin.Options{})
		if pkg == nil || !reflect.DeepEqual(skillIDs(pkg), []string{"demo/good", "demo/linked"}) || len(ds) != 0 {
			t.Fatalf("skills %v diagnostics %v", skillIDs(pkg), codes(ds))
		}
	})
	t.Run("4 command and cwd escape: that server invalid", func(t *testing.T) {
		pkg, ds := loadDir(t, write(t, with(map[string]string{
			"bin/server@": "../../outside/bin/server",
			"data@":       "../outside/data",
			"bin/ok":      "#!/bin/sh\n",
			"mcp.json": mcpDoc(`"cmd": {"type": "stdio", "command": "./bin/server"},
				"cwd": {"type": "stdio", "command": "node", "cwd": "./data/sub"},
				"cwd-root": {"type": "stdio", "command": "node", "cwd": "${PLUGIN_ROOT}/data"},
				"ok": {"type": "stdio", "command": "./bin/ok", "args": ["../outside/notes.txt"]}`),
		}), outside), agentplugin.Options{})
		want := []string{
			"error mcp-command-escapes-root mcp.json",
			"error mcp-cwd-escapes-root mcp.json",
			"error mcp-cwd-escapes-root mcp.json",
		}
		if pkg == nil || !reflect.DeepEqual(serverIDs(pkg), []string{"demo/ok"}) || !reflect.DeepEqual(codes(ds), want) {
			t.Fatalf("servers %v diagnostics %v", serverIDs(pkg), codes(ds))
		}
	})
	t.Run("5 other paths: access denied, plugin loads", func(t *testing.T) {
		pkg, ds := loadDir(t, write(t, with(map[string]string{
			"notes.txt@":                 "../outside/notes.txt",
			"skills/good/references@":    "../../../outside/resources",
			"com.example.client/config@": "/etc",
			"loop@":                      "loop",
			"broken@":                    "nowhere",
			"pipe|":                      "",
		}), outside), agentplugin.Options{})
		want := []string{
			"warning path-broken-link broken",
			"warning path-escapes-root com.example.client/config",
			"warning path-cycle loop",
			"warning path-escapes-root notes.txt",
			"warning path-special-file pipe",
			"warning path-escapes-root skills/good/references",
		}
		if pkg == nil || !reflect.DeepEqual(codes(ds), want) {
			t.Fatalf("diagnostics %v", codes(ds))
		}
		for p, b := range pkg.Snapshot.Files {
			if string(b) == "secret" {
				t.Errorf("%s was read from outside the root", p)
			}
		}
		if len(pkg.Skills) != 1 || len(pkg.Skills[0].Files) != 0 {
			t.Errorf("skill resources: %v", pkg.Skills)
		}
	})
}

// TestSpec4_1_OpaqueValuesNotPaths: args and env values are opaque
// strings, never checked as package paths (rule 5).
func TestSpec4_1_OpaqueValuesNotPaths(t *testing.T) {
	s, _ := snapshot.FromFiles(map[string][]byte{
		"plugin.json": []byte(minimal),
		"mcp.json": []byte(mcpDoc(`"s": {"type": "stdio", "command": "node",
			"args": ["../../etc/passwd", "/abs", "${PLUGIN_ROOT}/../x"], "env": {"P": "../../x"}}`)),
	})
	pkg, err := agentplugin.Load(s, agentplugin.Options{})
	if err != nil || len(pkg.Servers) != 1 || len(pkg.Diagnostics) != 0 {
		t.Fatalf("err %v diagnostics %v", err, pkg.Diagnostics)
	}
	if got := pkg.Servers[0].Args; !reflect.DeepEqual(got, []string{"../../etc/passwd", "/abs", "${PLUGIN_ROOT}/../x"}) {
		t.Errorf("args changed: %q", got)
	}
}

// TestSpec5_2_UnknownFieldsReportedOnceAndKept: each unknown field is
// reported once, ignored for meaning, and kept in the original manifest.
func TestSpec5_2_UnknownFieldsReportedOnceAndKept(t *testing.T) {
	s, _ := snapshot.FromFiles(map[string][]byte{"plugin.json": []byte(`{"$schema": "` + manifestSchema +
		`", "name": "demo", "skills": "./elsewhere", "x": 1, "y": {"z": 2}}`)})
	pkg, err := agentplugin.Load(s, agentplugin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var unknown []string
	for _, d := range pkg.Diagnostics {
		if d.Code == agentplugin.CodeManifestUnknownField {
			unknown = append(unknown, d.Pointer)
		}
	}
	if !reflect.DeepEqual(unknown, []string{"/skills", "/x", "/y"}) {
		t.Errorf("unknown fields reported: %v", unknown)
	}
	if string(pkg.Manifest["y"]) != `{"z": 2}` {
		t.Errorf("unknown field not kept: %s", pkg.Manifest["y"])
	}
}

// TestSpec5_2_SchemaSelectsRulesWithoutFetching: only the canonical 1.0.0
// identifier is recognised; lookalikes are not.
func TestSpec5_2_SchemaSelectsRulesWithoutFetching(t *testing.T) {
	for _, id := range []string{
		"http://agent-plugins.org/schemas/1.0.0/plugin.schema.json",
		"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json#",
		"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json ",
		"https://agent-plugins.org/schemas/1.0/plugin.schema.json",
		"https://agent-plugins.org/schemas/1.0.0/mcp.schema.json",
		"",
	} {
		s, _ := snapshot.FromFiles(map[string][]byte{"plugin.json": []byte(`{"$schema": "` + id + `", "name": "demo"}`)})
		_, err := agentplugin.Load(s, agentplugin.Options{})
		ds, rejected := agentplugin.Diagnostics(err)
		if !rejected || ds[0].Code != agentplugin.CodeManifestSchema {
			t.Errorf("$schema %q: %v", id, err)
		}
	}
	if got := agentplugin.SupportedVersions(); !reflect.DeepEqual(got, []string{"1.0.0"}) {
		t.Errorf("SupportedVersions = %v", got)
	}
}

// TestSpec7_2_2_TransportSupport: an unsupported transport is skipped with
// a warning, never an error (11.3), and other servers still load.
func TestSpec7_2_2_TransportSupport(t *testing.T) {
	s, _ := snapshot.FromFiles(map[string][]byte{
		"plugin.json": []byte(minimal),
		"mcp.json": []byte(mcpDoc(`"a": {"type": "stdio", "command": "node"},
			"b": {"type": "streamable-http", "url": "https://x.example/mcp"},
			"c": {"type": "sse", "url": "https://x.example/sse"}`)),
	})
	pkg, err := agentplugin.Load(s, agentplugin.Options{Transports: []agentplugin.Transport{agentplugin.Stdio, agentplugin.StreamableHTTP}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(serverIDs(pkg), []string{"demo/a", "demo/b"}) ||
		!reflect.DeepEqual(codes(pkg.Diagnostics), []string{"warning mcp-transport-unsupported mcp.json"}) {
		t.Errorf("servers %v diagnostics %v", serverIDs(pkg), codes(pkg.Diagnostics))
	}
	if agentplugin.HasErrors(pkg.Diagnostics) {
		t.Error("lack of support must not be an error")
	}
}

// TestSpec10_1_SchemaVersionMismatch: mcp.json targeting another version
// than plugin.json disables MCP only. One supported version cannot show a
// mismatch, so the test registers a second one.
func TestSpec10_1_SchemaVersionMismatch(t *testing.T) {
	restore := agentplugin.AddVersionForTest("9.9.9",
		"https://agent-plugins.org/schemas/9.9.9/plugin.schema.json",
		"https://agent-plugins.org/schemas/9.9.9/mcp.schema.json")
	defer restore()
	s, _ := snapshot.FromFiles(map[string][]byte{
		"plugin.json":       []byte(minimal),
		"mcp.json":          []byte(`{"$schema": "https://agent-plugins.org/schemas/9.9.9/mcp.schema.json", "mcpServers": {}}`),
		"skills/a/SKILL.md": []byte(skillDoc("a")),
	})
	pkg, err := agentplugin.Load(s, agentplugin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if pkg.MCP != agentplugin.MCPDisabled || len(pkg.Skills) != 1 ||
		!reflect.DeepEqual(codes(pkg.Diagnostics), []string{"error mcp-schema-mismatch mcp.json"}) {
		t.Errorf("mcp %s diagnostics %v", pkg.MCP, codes(pkg.Diagnostics))
	}
}

// TestDiagnosticsNeverEchoSecrets: env and header values may be secrets;
// no message repeats them, whatever is wrong with the entry.
func TestDiagnosticsNeverEchoSecrets(t *testing.T) {
	const secret = "s3cr3t-VALUE"
	s, _ := snapshot.FromFiles(map[string][]byte{
		"plugin.json": []byte(minimal),
		"mcp.json": []byte(mcpDoc(`
			"a": {"type": "stdio", "command": "node", "env": {"PLUGIN_ROOT": "` + secret + `", "B=": "` + secret + `"}},
			"b": {"type": "streamable-http", "url": "http://api.example.com/?token=` + secret + `", "headers": {"X-Key": "` + secret + `\n", "x-key": "` + secret + `"}},
			"c": {"type": "sse", "url": "https://u:` + secret + `@x.example/", "headers": {"Bad Name": "` + secret + `"}}`)),
	})
	pkg, err := agentplugin.Load(s, agentplugin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkg.Diagnostics) < 6 {
		t.Fatalf("expected a diagnostic per problem, got %v", codes(pkg.Diagnostics))
	}
	for _, d := range pkg.Diagnostics {
		if strings.Contains(d.String(), secret) {
			t.Errorf("diagnostic leaks a value: %s", d)
		}
	}
}

func TestDiagnosticLimits(t *testing.T) {
	var servers []string
	for i := range 50 {
		servers = append(servers, `"s`+strings.Repeat("x", i)+`": {"type": "stdio", "command": "/abs"}`)
	}
	s, _ := snapshot.FromFiles(map[string][]byte{"plugin.json": []byte(minimal), "mcp.json": []byte(mcpDoc(strings.Join(servers, ",")))})
	pkg, err := agentplugin.Load(s, agentplugin.Options{Limits: agentplugin.Limits{MaxDiagnostics: 10, MaxMessageLen: 40}})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkg.Diagnostics) != 11 || pkg.Diagnostics[10].Code != agentplugin.CodeDiagnosticsTruncated {
		t.Fatalf("got %d diagnostics, last %v", len(pkg.Diagnostics), pkg.Diagnostics[len(pkg.Diagnostics)-1])
	}
	if !strings.Contains(pkg.Diagnostics[10].Message, "40 more") {
		t.Errorf("truncation message: %s", pkg.Diagnostics[10].Message)
	}
	for _, d := range pkg.Diagnostics[:10] {
		if len(d.Message) > 40 {
			t.Errorf("message not bounded: %q", d.Message)
		}
	}
	pkg, err = agentplugin.Load(s, agentplugin.Options{Limits: agentplugin.Limits{MaxServers: 3}})
	if err != nil || !slices.ContainsFunc(pkg.Diagnostics, func(d agentplugin.Diagnostic) bool { return d.Code == agentplugin.CodeMCPServersLimit }) {
		t.Errorf("server limit not reported: %v", err)
	}
	// Each SKILL.md is held to Limits.Skill.
	s, _ = snapshot.FromFiles(map[string][]byte{"plugin.json": []byte(minimal),
		"skills/demo/SKILL.md": []byte("---\nname: demo\ndescription: " + strings.Repeat("d", 300) + "\n---\nBody\n")})
	for limit, skills := range map[int]int{0: 1, 200: 0} {
		pkg, err = agentplugin.Load(s, agentplugin.Options{Limits: agentplugin.Limits{Skill: skill.Limits{MaxFrontmatterBytes: limit}}})
		if err != nil || len(pkg.Skills) != skills {
			t.Errorf("MaxFrontmatterBytes %d: %d skills, %v", limit, len(pkg.Skills), err)
		}
	}
}

func TestJSONDepthLimit(t *testing.T) {
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	s, _ := snapshot.FromFiles(map[string][]byte{"plugin.json": []byte(`{"$schema": "` + manifestSchema + `", "name": "demo", "extensions": {"com.x.y": {"a": ` + deep + `}}}`)})
	_, err := agentplugin.Load(s, agentplugin.Options{})
	ds, rejected := agentplugin.Diagnostics(err)
	if !rejected || ds[0].Code != agentplugin.CodeManifestJSON || !strings.Contains(ds[0].Message, "nesting") {
		t.Errorf("deep JSON: %v", err)
	}
	if !errors.Is(err, agentplugin.ErrRejected) {
		t.Error("rejection does not match ErrRejected")
	}
}

func TestStrictSkills(t *testing.T) {
	s, _ := snapshot.FromFiles(map[string][]byte{
		"plugin.json":       []byte(minimal),
		"skills/a/SKILL.md": []byte("---\nname: a\ndescription: d\nextra: 1\n---\n"),
	})
	for _, strict := range []bool{false, true} {
		pkg, err := agentplugin.Load(s, agentplugin.Options{StrictSkills: strict})
		if err != nil {
			t.Fatal(err)
		}
		if loaded := len(pkg.Skills) == 1; loaded == strict {
			t.Errorf("strict=%v: skills %v diagnostics %v", strict, skillIDs(pkg), codes(pkg.Diagnostics))
		}
	}
}

// TestSkillContents: a loaded skill carries its frontmatter, body and
// resource files under their full package paths.
func TestSkillContents(t *testing.T) {
	pkg, err := agentplugin.LoadDir("../examples/release-notes", agentplugin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sk := pkg.Skills[1]
	if sk.ID != "release-notes/semver-check" || sk.Compatibility != "Requires git" || sk.AllowedTools != "Bash(git:*) Read" ||
		!strings.HasPrefix(sk.Body, "\n# Semantic version check") {
		t.Errorf("skill: %+v", sk.Skill)
	}
	if _, ok := sk.Files["references/rules.md"]; !ok || len(sk.Files) != 1 {
		t.Errorf("files: %v", sk.Files)
	}
	if !reflect.DeepEqual(pkg.Extensions, []string{"com.example.client"}) || !reflect.DeepEqual(pkg.ExtensionDirectories, []string{"com.example.client"}) {
		t.Errorf("extensions %v dirs %v", pkg.Extensions, pkg.ExtensionDirectories)
	}
}

// TestSpec5_2_NeverRetrievesSchema: "Clients MUST NOT retrieve a schema
// while loading a plugin" (5.2, and 7.2.1 for mcp.json). A plugin whose
// plugin.json or mcp.json names a schema served on 127.0.0.1 is loaded
// without one request reaching that server; and no package the loader is
// built from has an HTTP client.
func TestSpec5_2_NeverRetrievesSchema(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"type": "object"}`))
	}))
	defer srv.Close()
	for name, files := range map[string]map[string][]byte{
		"manifest": {"plugin.json": []byte(`{"$schema": "` + srv.URL + `/plugin.schema.json", "name": "demo"}`)},
		"mcp": {"plugin.json": []byte(minimal),
			"mcp.json": []byte(`{"$schema": "` + srv.URL + `/mcp.schema.json", "mcpServers": {}}`)},
	} {
		s, _ := snapshot.FromFiles(files)
		pkg, err := agentplugin.Load(s, agentplugin.Options{})
		if pkg != nil && pkg.MCP == agentplugin.MCPConfigured {
			t.Errorf("%s: a schema plugkit does not know was accepted", name)
		}
		if err != nil && !errors.Is(err, agentplugin.ErrRejected) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loader sent %d requests for a schema", n)
	}

	// go test puts its own go command first on PATH.
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/plugkit/plugkit/skill") {
		t.Fatalf("go list -deps does not list the loader's packages: %v", deps)
	}
	for _, client := range []string{"net/http", "crypto/tls", "net/rpc", "os/exec"} {
		if slices.Contains(deps, client) {
			t.Errorf("the loader is built with %s", client)
		}
	}
}
