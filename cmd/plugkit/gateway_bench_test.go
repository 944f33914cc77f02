//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plugkit/plugkit/internal/testbin"
)

// The gateway's speed targets (issue 12), measured with real processes:
// the plugkit binary as the gateway, MCP servers as child processes, the
// go-sdk client on the other side. bench/gateway.sh runs them.

// connectCmd connects a client to the MCP server cmd runs.
func connectCmd(b *testing.B, cmd *exec.Cmd) *mcp.ClientSession {
	b.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	sess, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return sess
}

// BenchmarkGatewayCall is the cost the gateway adds to a tool call: in
// each iteration the same echo tool is called once through plugkit gateway
// (stdio) and once directly on the same server program, interleaved so
// that load from elsewhere hits both alike. Target: overhead under 1 ms.
func BenchmarkGatewayCall(b *testing.B) {
	bin := testbin.Plugkit(b)
	root := writeNamedPlugin(b, "bench", `{"s": {"type": "stdio", "command": "./bin/run"}}`, nil)
	gwCmd, directCmd := exec.Command(bin, "gateway", "--home", b.TempDir(), root), exec.Command(testServerBin(b))
	gw := connectCmd(b, gwCmd)
	defer gw.Close()
	direct := connectCmd(b, directCmd)
	defer direct.Close()
	ctx := context.Background()
	call := func(s *mcp.ClientSession, name string) time.Duration {
		begin := time.Now()
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"n": 1}})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %+v", name, err, res)
		}
		return time.Since(begin)
	}
	call(gw, "bench_s_echo") // starts the server
	call(direct, "echo")
	var through, alone time.Duration
	gwCPU, serverCPU := cpuTime(gwCmd.Process.Pid), cpuTime(directCmd.Process.Pid)
	for b.Loop() {
		through += call(gw, "bench_s_echo")
		alone += call(direct, "echo")
	}
	gwCPU, serverCPU = cpuTime(gwCmd.Process.Pid)-gwCPU, cpuTime(directCmd.Process.Pid)-serverCPU
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(b.N) }
	b.ReportMetric(us(through), "gateway-µs/call")
	b.ReportMetric(us(alone), "direct-µs/call")
	b.ReportMetric(us(through-alone), "overhead-µs/call")
	// CPU time depends far less on the machine's load than wall time:
	// the gateway's against the server's own, per call.
	b.ReportMetric(us(gwCPU), "gateway-cpu-µs/call")
	b.ReportMetric(us(serverCPU), "server-cpu-µs/call")
}

// cpuTime is the CPU time process pid has used, all its threads, from
// /proc/PID/task/*/schedstat (nanoseconds); zero where there is no /proc.
func cpuTime(pid int) time.Duration {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var total time.Duration
	for _, f := range files {
		var ns int64
		if b, err := os.ReadFile(f); err == nil {
			fmt.Sscan(string(b), &ns)
		}
		total += time.Duration(ns)
	}
	return total
}

// shellServer is a minimal MCP server in sh (as plugkit init writes): it
// answers initialize, ping and tools/list with five tools. Cheap enough to
// run 200 of them at once.
const shellServer = `#!/bin/sh
field() { printf '%s\n' "$line" | sed -n 's/.*"'"$1"'"[[:space:]]*:[[:space:]]*\([^,}]*\).*/\1/p'; }
while IFS= read -r line || [ -n "$line" ]; do
	id=$(field id)
	[ -n "$id" ] || continue
	case $(field method) in
	'"initialize"') result='{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}' ;;
	'"ping"') result='{}' ;;
	'"tools/list"') result='{"tools":[` + shellTools + `]}' ;;
	*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}\n' "$id"; continue ;;
	esac
	printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$id" "$result"
done
`

const shellTools = `{"name":"read","description":"Read a file","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}},` +
	`{"name":"write","description":"Write a file","inputSchema":{"type":"object","properties":{"path":{"type":"string"},"text":{"type":"string"}}}},` +
	`{"name":"search","description":"Search","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}},` +
	`{"name":"list","description":"List","inputSchema":{"type":"object"}},` +
	`{"name":"stat","description":"Stat a file","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}`

// benchHome installs n plugins of four sh servers and one skill each into
// a new home.
func benchHome(b *testing.B, n int) string {
	b.Helper()
	home, dirs := b.TempDir(), b.TempDir()
	args := []string{"install", "--yes", "--home", home}
	for i := range n {
		root := filepath.Join(dirs, fmt.Sprintf("p%02d", i))
		files := map[string]string{
			"plugin.json":            fmt.Sprintf(`{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "p%02d"}`, i),
			"mcp.json":               `{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {"a": {"type": "stdio", "command": "./bin/server"}, "b": {"type": "stdio", "command": "./bin/server"}, "c": {"type": "stdio", "command": "./bin/server"}, "d": {"type": "stdio", "command": "./bin/server"}}}`,
			"bin/server":             shellServer,
			"skills/guide/SKILL.md":  "---\nname: guide\ndescription: A guide.\n---\nRead me.\n",
			"skills/guide/ref/a.md":  "reference",
			"skills/guide/ref/b.txt": "more",
		}
		for p, c := range files {
			full := filepath.Join(root, filepath.FromSlash(p))
			os.MkdirAll(filepath.Dir(full), 0o755)
			os.WriteFile(full, []byte(c), 0o755)
		}
		args = append(args, root)
	}
	var out, errb bytes.Buffer
	if code := program.Run(args, &out, &errb); code != 0 {
		b.Fatalf("install: %s", errb.String())
	}
	return home
}

// rawClient speaks MCP to a stdio gateway as bare JSON-RPC lines and does
// not decode the answers: what it times is the gateway's work and the
// pipe, not a client library's (the go-sdk client validates every tool's
// schema, which costs more than the gateway's whole answer).
type rawClient struct {
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func startRaw(b *testing.B, cmd *exec.Cmd) *rawClient {
	b.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); cmd.Wait() })
	c := &rawClient{in: in, out: bufio.NewReaderSize(out, 1<<20)}
	c.request("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`)
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

// request sends one request and returns its answer's line.
func (c *rawClient) request(method, params string) []byte {
	c.id++
	fmt.Fprintf(c.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", c.id, method, params)
	want := []byte(fmt.Sprintf(`"id":%d,`, c.id))
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			panic(err)
		}
		if bytes.Contains(line, want) {
			return line
		}
	}
}

// BenchmarkGatewayToolsList is tools/list through the gateway over 50
// installed plugins of 4 servers each (1,000 tools), once every server has
// started, answered in one page. The first list, which starts the 200
// servers, is reported apart. Target: under 50 ms.
func BenchmarkGatewayToolsList(b *testing.B) {
	bin := testbin.Plugkit(b)
	home := benchHome(b, 50)
	c := startRaw(b, exec.Command(bin, "gateway", "--home", home))
	begin := time.Now()
	first := c.request("tools/list", "{}")
	firstTime := time.Since(begin)
	if n := bytes.Count(first, []byte(`"inputSchema"`)); n != 50*4*5 || bytes.Contains(first, []byte("nextCursor")) {
		b.Fatalf("%d tools listed, want 1000 in one page", n)
	}
	var total time.Duration
	for b.Loop() {
		begin := time.Now()
		c.request("tools/list", "{}")
		total += time.Since(begin)
	}
	b.ReportMetric(float64(firstTime.Microseconds())/1e3, "first-list-ms")
	b.ReportMetric(float64(total.Microseconds())/1e3/float64(b.N), "list-ms")
	b.ReportMetric(float64(len(first)), "answer-bytes")
}

// BenchmarkGatewayStart is the time from starting plugkit gateway to the
// end of the MCP handshake, with 50 installed plugins (servers start
// lazily, so none runs yet) next to an empty home, interleaved. Target:
// under 100 ms. The gateway answers the handshake before it has verified
// and loaded the plugins, so the time to the first answer that needs
// them loaded and starts no server (prompts/get of a skill; a list would
// start the servers, whose prompts and resources it forwards) is reported
// too.
func BenchmarkGatewayStart(b *testing.B) {
	bin := testbin.Plugkit(b)
	full, empty := benchHome(b, 50), b.TempDir()
	start := func(home string, skill bool) (handshake, ready time.Duration) {
		begin := time.Now()
		s := connectCmd(b, exec.Command(bin, "gateway", "--home", home))
		handshake = time.Since(begin)
		_, err := s.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "p49/guide"})
		if (err == nil) != skill {
			b.Fatalf("prompts/get p49/guide: %v", err)
		}
		ready = time.Since(begin)
		s.Close()
		return handshake, ready
	}
	var with, withReady, without, withoutReady time.Duration
	for b.Loop() {
		h, r := start(full, true)
		with, withReady = with+h, withReady+r
		h, r = start(empty, false)
		without, withoutReady = without+h, withoutReady+r
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / float64(b.N) }
	b.ReportMetric(ms(with), "start-50-plugins-ms")
	b.ReportMetric(ms(without), "start-empty-home-ms")
	b.ReportMetric(ms(withReady), "skill-50-plugins-ms")
	b.ReportMetric(ms(withoutReady), "skill-empty-home-ms")
}
