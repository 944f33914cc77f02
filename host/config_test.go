package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/internal/syncbuf"
)

func TestParseConfig(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "key"), "file-secret\n")
	env := map[string]string{"TOKEN": "env-secret"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	c, err := ParseConfig([]byte(`{
		"inheritEnv": ["AWS_PROFILE", "LC_*"],
		"servers": {"p/s": {
			"headers": {"Authorization": {"env": "TOKEN", "prefix": "Bearer "}, "X-Tenant": "acme"},
			"env": {"KEY": {"file": "key"}, "PLAIN": {"value": "v"}}
		}}}`), dir, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if c.Overlays.Headers["p/s"].Get("Authorization") != "Bearer env-secret" || c.Overlays.Headers["p/s"].Get("X-Tenant") != "acme" {
		t.Errorf("headers %v", c.Overlays.Headers)
	}
	if c.Overlays.Env["p/s"]["KEY"] != "file-secret" || c.Overlays.Env["p/s"]["PLAIN"] != "v" || len(c.InheritEnv) != 2 {
		t.Errorf("env %v inherit %v", c.Overlays.Env, c.InheritEnv)
	}

	for _, tc := range []struct{ doc, want string }{
		{`{"servers": {"p/s": {"env": {"A": {"env": "UNSET"}}}}}`, "UNSET is not set"},
		{`{"servers": {"p/s": {"env": {"A": {"env": "TOKEN", "file": "key"}}}}}`, "exactly one"},
		{`{"servers": {"p/s": {"env": {"A": {}}}}}`, "exactly one"},
		{`{"servers": {"p/s": {"env": {"A": {"file": "missing"}}}}}`, "missing"},
		{`{"servers": {"p/s": {"env": {"PLUGIN_DATA": "x"}}}}`, "cannot be set"},
		{`{"servers": {"p/s": {"env": {"A=B": "x"}}}}`, "cannot be set"},
		{`{"servers": {"p/s": {"headers": {"X-Bad": "line\nbreak secret-value"}}}}`, "X-Bad"},
		{`{"servers": {"p/s": {"headers": {"x-a": "1", "X-A": "2"}}}}`, "twice"},
		{`{"servers": {"nodelim": {}}}`, "server ID"},
		{`{"servers": {"p/s/t": {}}}`, "server ID"},
		{`{"servers": {}, "servers": {}}`, "duplicate"},
		{`{"server": {}}`, "unknown field"},
		{`{"servers": {"p/s": {"env": {"A": {"valu": "x"}}}}}`, "unknown field"},
		{`{"inheritEnv": ["A=B"]}`, "inheritEnv"},
		{`[`, "JSON"},
	} {
		_, err := ParseConfig([]byte(tc.doc), dir, lookup)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrConfig mentioning %q", tc.doc, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "env-secret")) {
			t.Errorf("%s: the error quotes a value: %v", tc.doc, err)
		}
	}
}

// TestOverlaysReachServersAndNeverTheLog: the host's credentials reach a
// stdio server's environment and a remote server's requests, win over
// the plugin's own values, and never appear in the host's log, even when
// servers fail.
func TestOverlaysReachServersAndNeverTheLog(t *testing.T) {
	remote := newRemote(t)
	p := loadPlugin(t, writePlugin(t, pluginSpec{name: "p", servers: `{
		"local": {"type": "stdio", "command": "./bin/server", "env": {"API_KEY": "placeholder"}},
		"web":   {"type": "streamable-http", "url": "` + remote.URL + `", "headers": {"authorization": "placeholder"}},
		"crash": {"type": "stdio", "command": "./bin/server", "env": {"TESTSERVER_CRASH": "boom"}},
		"down":  {"type": "streamable-http", "url": "http://127.0.0.1:1/mcp"}}`}))
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "host.json"), `{"servers": {
		"p/local": {"env": {"API_KEY": {"env": "OVERLAY_KEY"}}},
		"p/crash": {"env": {"API_KEY": {"env": "OVERLAY_KEY"}}},
		"p/web":   {"headers": {"Authorization": {"file": "token", "prefix": "Bearer "}}},
		"p/down":  {"headers": {"Authorization": {"file": "token", "prefix": "Bearer "}}}}}`)
	mustWrite(t, filepath.Join(dir, "token"), "tok-3141592653\n")
	t.Setenv("OVERLAY_KEY", "key-2718281828")
	c, err := LoadConfig(filepath.Join(dir, "host.json"))
	if err != nil {
		t.Fatal(err)
	}
	var log syncbuf.Buffer
	h := newHost(t, []Plugin{p}, Options{Overlays: c.Overlays, Logger: logger(&log)})
	h.Start(context.Background())
	var info serverInfo
	callJSON(t, h, "p_local_info", nil, &info)
	if !strings.Contains(strings.Join(info.Env, "\n"), "API_KEY=key-2718281828") {
		t.Errorf("the env overlay did not reach the server: %q", info.Env)
	}
	if _, err := h.CallTool(context.Background(), "p_web_ping", nil); err != nil {
		t.Fatal(err)
	}
	if !remote.sawHeader("Authorization", "Bearer tok-3141592653") || remote.sawHeader("Authorization", "placeholder") {
		t.Error("the header overlay did not replace the configured header")
	}
	h.Tools(context.Background())
	out := log.String()
	if !strings.Contains(out, "p/crash") || !strings.Contains(out, "p/down") {
		t.Errorf("the failures were not logged:\n%s", out)
	}
	for _, secret := range []string{"key-2718281828", "tok-3141592653"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds an overlay value:\n%s", out)
		}
		for _, s := range h.Servers() {
			if strings.Contains(s.Reason+s.Stderr, secret) {
				t.Errorf("%s's status holds an overlay value: %+v", s.ID, s)
			}
		}
	}
}

// TestLoadConfigLimits: a configuration file past MaxConfigBytes and a
// value file past MaxSecretBytes are refused by name, read no further than
// the limit, and a missing file is the operating system's error.
func TestLoadConfigLimits(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	mustWrite(t, big, `{"servers": {}}`+strings.Repeat(" ", MaxConfigBytes))
	if _, err := LoadConfig(big); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "MaxConfigBytes") {
		t.Errorf("a config of more than MaxConfigBytes: %v", err)
	}
	mustWrite(t, filepath.Join(dir, "huge-secret"), strings.Repeat("s", MaxSecretBytes+1))
	mustWrite(t, filepath.Join(dir, "host.json"), `{"servers": {"p/s": {"env": {"A": {"file": "huge-secret"}}}}}`)
	_, err := LoadConfig(filepath.Join(dir, "host.json"))
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "MaxSecretBytes") || strings.Contains(err.Error(), "sss") {
		t.Errorf("a value file of more than MaxSecretBytes: %v", err)
	}
	if _, err := LoadConfig(filepath.Join(dir, "absent.json")); !errors.Is(err, os.ErrNotExist) || errors.Is(err, ErrConfig) {
		t.Errorf("a missing config: %v, want the operating system's error", err)
	}
}
