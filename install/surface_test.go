package install

import (
	"strings"
	"testing"
)

// TestDiffSurface: every field of the launch surface that widens what a
// plugin may run needs consent when it changes; a removed server does not.
func TestDiffSurface(t *testing.T) {
	h := func(v string) string { return "sha256:" + sha256Hex([]byte(v)) }
	base := []Server{
		{Name: "db", Transport: "stdio", Command: "./bin/db", Args: []string{"--x"}, Cwd: "${PLUGIN_DATA}", Env: map[string]string{"MODE": h("fast")}},
		{Name: "api", Transport: "streamable-http", URL: "https://a.example.com/mcp", Headers: map[string]string{"X-Tenant": h("t")}},
	}
	clone := func() []Server {
		out := make([]Server, len(base))
		for i, s := range base {
			out[i] = s
			out[i].Args = append([]string(nil), s.Args...)
			out[i].Env, out[i].Headers = map[string]string{}, map[string]string{}
			for k, v := range s.Env {
				out[i].Env[k] = v
			}
			for k, v := range s.Headers {
				out[i].Headers[k] = v
			}
		}
		return out
	}
	for _, c := range []struct {
		name   string
		change func(s []Server) []Server
		want   string
	}{
		{"command", func(s []Server) []Server { s[0].Command = "./bin/db2"; return s }, "server db: command: ./bin/db -> ./bin/db2"},
		{"args", func(s []Server) []Server { s[0].Args = []string{"--x", "--y"}; return s }, `server db: args: ["--x"] -> ["--x" "--y"]`},
		{"cwd", func(s []Server) []Server { s[0].Cwd = ""; return s }, "server db: cwd: ${PLUGIN_DATA} -> (absent)"},
		{"env value", func(s []Server) []Server { s[0].Env["MODE"] = h("slow"); return s }, "server db: env MODE: " + h("fast") + " -> " + h("slow")},
		{"env name", func(s []Server) []Server { s[0].Env["PATH"] = h("/x"); return s }, "server db: env PATH: (absent) -> " + h("/x")},
		{"transport", func(s []Server) []Server { s[1].Transport = "sse"; return s }, "server api: transport: streamable-http -> sse"},
		{"url", func(s []Server) []Server { s[1].URL = "https://b.example.com/mcp"; return s }, "server api: url: https://a.example.com/mcp -> https://b.example.com/mcp"},
		{"header value", func(s []Server) []Server { s[1].Headers["X-Tenant"] = h("u"); return s }, "server api: header X-Tenant: " + h("t") + " -> " + h("u")},
		{"header name", func(s []Server) []Server { s[1].Headers["X-Other"] = h("t"); return s }, "server api: header X-Other: (absent) -> " + h("t")},
		{"new server", func(s []Server) []Server { return append(s, Server{Name: "zz", Transport: "stdio", Command: "sh"}) }, "server zz added"},
	} {
		d := DiffSurface(base, c.change(clone()))
		if len(d) != 1 || d[0].String() != c.want || !d[0].NeedsConsent() {
			t.Errorf("%s: %v, want %q needing consent", c.name, d, c.want)
		}
	}
	d := DiffSurface(base, clone()[:1])
	if len(d) != 1 || d[0].String() != "server api removed" || d[0].NeedsConsent() {
		t.Errorf("removed server: %v", d)
	}
	if d := DiffSurface(base, clone()); len(d) != 0 {
		t.Errorf("no change: %v", d)
	}
	// Env and header values never appear, only their digests.
	for _, c := range DiffSurface(nil, base) {
		if strings.Contains(c.String(), "fast") {
			t.Errorf("a value leaked: %s", c)
		}
	}
}

func TestCodePaths(t *testing.T) {
	code := codePaths([]Server{{Command: "./bin/db"}, {Command: "./run.sh"}, {Command: "node"}, {URL: "https://x"}})
	if strings.Join(code, " ") != "bin/ bin/db run.sh" {
		t.Fatalf("codePaths: %q", code)
	}
	for p, want := range map[string]bool{"bin/db": true, "bin/lib/x.so": true, "run.sh": true, "README.md": false, "binary": false, "skills/a/SKILL.md": false} {
		if underCode(p, code) != want {
			t.Errorf("underCode(%q) = %v", p, !want)
		}
	}
}
