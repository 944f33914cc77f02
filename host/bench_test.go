package host

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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
