package mcprun

import (
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
)

// TestSpec91_BaseEnvironmentIsTheSafeSet: a stdio
// server started with the default base environment sees the small safe set
// of variables the official MCP TypeScript SDK passes, plus its configured
// env and the reserved variables, and none of the client's secrets.
func TestSpec91_BaseEnvironmentIsTheSafeSet(t *testing.T) {
	root := newRoot(t)
	installServer(t, root, "bin/server")
	secrets := map[string]string{"PLUGKIT_TOKEN": "tok", "PLUGKIT_PUBLISH_TOKENS": "pub",
		"AWS_SECRET_ACCESS_KEY": "aws", "GITHUB_TOKEN": "gh"}
	safe := map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/home/h", "USER": "u", "LOGNAME": "u",
		"SHELL": "/bin/sh", "TERM": "xterm", "LANG": "C.UTF-8", "LC_ALL": "C", "LC_CTYPE": "C", "TMPDIR": "/tmp"}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	for k, v := range safe {
		t.Setenv(k, v)
	}
	t.Setenv("BASH_FUNC_x%%", "() { echo pwned; }") // an exported shell function is never passed

	opts := StartOptions{PlanOptions: baseOptions(t, root)}
	opts.BaseEnv = nil
	srv := stdioServer("p", "s")
	srv.Env = map[string]string{"CONFIGURED": "yes"}
	rt := startPlugin(t, &agentplugin.Package{Name: "p", Servers: []agentplugin.Server{srv}}, opts)
	var got serverInfo
	callTool(t, rt, "p/s", "info", nil, &got)
	env := envMap(t, got.Env)
	for k := range secrets {
		if _, ok := env[k]; ok {
			t.Errorf("the server saw the client's %s", k)
		}
	}
	for k, v := range safe {
		if env[k] != v {
			t.Errorf("safe variable %s = %q, want %q", k, env[k], v)
		}
	}
	if env["CONFIGURED"] != "yes" || env["PLUGIN_ROOT"] != root || env["PLUGIN_DATA"] == "" {
		t.Errorf("configured and reserved variables missing: %v", env)
	}
	if _, ok := env["BASH_FUNC_x%%"]; ok {
		t.Error("an exported shell function reached the server")
	}
}
