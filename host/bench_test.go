package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/install"
	"github.com/plugkit/plugkit/source"
)

// BenchmarkHomePluginsLoad is most of plugkit gateway's start-up with 50
// installed plugins (4 servers and a skill of 3 files each) when servers
// start lazily: every tree verified against its file list, then loaded.
func BenchmarkHomePluginsLoad(b *testing.B) {
	home, err := install.Open(b.TempDir(), install.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var srcs []source.Source
	for i := range 50 {
		root := writePlugin(b, pluginSpec{name: fmt.Sprintf("p%02d", i),
			servers: `{"a": {"type": "stdio", "command": "./bin/server"}, "b": {"type": "stdio", "command": "./bin/server"},
				"c": {"type": "stdio", "command": "./bin/server"}, "d": {"type": "stdio", "command": "./bin/server"}}`,
			skills: map[string]string{"guide": "Read me."},
			files:  map[string]string{"skills/guide/ref/a.md": "reference", "skills/guide/ref/b.txt": "more"}})
		// A script stands in for the server: the benchmark is about
		// plugkit's work, not hashing a 10 MB test binary 50 times.
		os.Remove(filepath.Join(root, "bin", "server"))
		os.WriteFile(filepath.Join(root, "bin", "server"), []byte("#!/bin/sh\nexit 0\n"), 0o755)
		srcs = append(srcs, source.Source{Kind: source.Path, Path: root})
	}
	yes := func(context.Context, *install.Change) (bool, error) { return true, nil }
	if _, err := home.Install(context.Background(), srcs, install.InstallOptions{Consent: yes}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		plugins, errs, err := NewHomePlugins(home, agentplugin.Options{}).Load()
		if err != nil || len(errs) > 0 || len(plugins) != 50 {
			b.Fatal(err, errs, len(plugins))
		}
	}
}

// BenchmarkCallTool is the host's own cost per tool call: the same echo
// tool called through Host.CallTool (name lookup, restart bookkeeping,
// timeout, URI rewriting) and directly on the server's session,
// interleaved. plugkit gateway adds one more process hop on top
// (cmd/plugkit BenchmarkGatewayCall).
func BenchmarkCallTool(b *testing.B) {
	p := loadPlugin(b, writePlugin(b, pluginSpec{name: "bench", servers: `{"s": {"type": "stdio", "command": "./bin/server"}}`}))
	h := newHost(b, []Plugin{p}, Options{})
	ctx := context.Background()
	args := map[string]any{"n": 1}
	if _, err := h.CallTool(ctx, "bench_s_echo", args); err != nil {
		b.Fatal(err)
	}
	sess, _, err := h.servers()[0].session(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var through, direct time.Duration
	for b.Loop() {
		begin := time.Now()
		if _, err := h.CallTool(ctx, "bench_s_echo", args); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if _, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
			b.Fatal(err)
		}
		through, direct = through+mid.Sub(begin), direct+time.Since(mid)
	}
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(b.N) }
	b.ReportMetric(us(through), "host-µs/call")
	b.ReportMetric(us(direct), "session-µs/call")
	b.ReportMetric(us(through-direct), "overhead-µs/call")
}
