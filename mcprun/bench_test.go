package mcprun

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/plugkit/plugkit/agentplugin"
)

// benchPlugin is a plugin with n identical stdio test servers.
func benchPlugin(b testing.TB, n int) (*agentplugin.Package, StartOptions) {
	root := newRoot(b)
	installServer(b, root, "bin/server")
	pkg := &agentplugin.Package{Name: "bench"}
	for i := range n {
		srv := stdioServer("bench", fmt.Sprintf("s%02d", i))
		srv.Args = []string{"--data", "${PLUGIN_DATA}/x", "${PLUGIN_ROOT}/cfg"}
		srv.Env = map[string]string{"A": "${PLUGIN_ROOT}", "B": "b"}
		pkg.Servers = append(pkg.Servers, srv)
	}
	return pkg, StartOptions{PlanOptions: baseOptions(b, root)}
}

// BenchmarkPlan is plugkit's own work per stdio server before launch:
// resolution, containment, expansion and environment.
func BenchmarkPlan(b *testing.B) {
	pkg, opts := benchPlugin(b, 1)
	b.ReportAllocs()
	for b.Loop() {
		p, err := Plan(pkg, pkg.Servers[0], opts.PlanOptions)
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Prepare(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStartToFirstToolsList is the time from Start to the first
// tools/list answer of one test server (Close excluded). Each iteration
// also does the same with the SDK alone (no plan, no process group, no
// stderr tail), interleaved so that load from elsewhere hits both alike:
// the difference is plugkit's own overhead per server, since the
// handshake and the server's own start-up are in both.
func BenchmarkStartToFirstToolsList(b *testing.B) {
	pkg, opts := benchPlugin(b, 1)
	opts.Client = mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	ctx := context.Background()
	var ours, sdk time.Duration
	for b.Loop() {
		begin := time.Now()
		rt, err := Start(ctx, pkg, opts)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := rt.Session("bench/s00").ListTools(ctx, nil); err != nil {
			b.Fatal(err)
		}
		ours += time.Since(begin)
		rt.Close()

		begin = time.Now()
		cmd := exec.Command(serverBin(b))
		cmd.Dir = opts.Root
		s, err := opts.Client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.ListTools(ctx, nil); err != nil {
			b.Fatal(err)
		}
		sdk += time.Since(begin)
		s.Close()
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(ms(ours), "plugkit-ms")
	b.ReportMetric(ms(sdk), "sdk-only-ms")
	b.ReportMetric(ms(ours-sdk), "overhead-ms")
}

// BenchmarkStart20 starts 20 stdio servers together and reports the time
// until all are ready next to the slowest and the median of 20 single
// starts measured alone; the target is a ratio to the slowest of at most
// 1.5. "instant" is the bare test server, whose start-up is pure CPU (on
// few cores 20 of them queue for the CPU, whatever the launcher does);
// "startup-200ms" waits 200ms first, as real servers that read, install
// or connect do, and shows the launches overlap.
func BenchmarkStart20(b *testing.B) {
	for _, delay := range []string{"", "200ms"} {
		name := "instant"
		if delay != "" {
			name = "startup-" + delay
		}
		b.Run(name, func(b *testing.B) { benchStart20(b, delay) })
	}
}

func benchStart20(b *testing.B, delay string) {
	one, oneOpts := benchPlugin(b, 1)
	many, manyOpts := benchPlugin(b, 20)
	oneOpts.BaseEnv = []string{"TESTSERVER_DELAY=" + delay}
	manyOpts.BaseEnv = oneOpts.BaseEnv
	ctx := context.Background()
	start := func(pkg *agentplugin.Package, opts StartOptions) time.Duration {
		begin := time.Now()
		rt, err := Start(ctx, pkg, opts)
		d := time.Since(begin)
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range rt.Servers() {
			if s.Status != StatusReady {
				b.Fatalf("%s: %s %s", s.ID, s.Status, s.Reason)
			}
		}
		rt.Close()
		return d
	}
	var singles []time.Duration
	var together time.Duration
	for b.Loop() {
		b.StopTimer()
		for range 20 {
			singles = append(singles, start(one, oneOpts))
		}
		b.StartTimer()
		together += start(many, manyOpts)
	}
	slices.Sort(singles)
	slowest, median := singles[len(singles)-1], singles[len(singles)/2]
	all := together / time.Duration(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(all), "all-20-ms")
	b.ReportMetric(ms(slowest), "slowest-single-ms")
	b.ReportMetric(ms(median), "median-single-ms")
	b.ReportMetric(float64(all)/float64(slowest), "ratio-to-slowest")
}
