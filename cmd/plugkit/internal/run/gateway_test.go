//go:build unix

package run

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/host"
	"github.com/plugkit/plugkit/internal/testbin"
	"github.com/plugkit/plugkit/internal/testservice"
)

// gatewayPlugins writes the test plugins: alpha (two stdio
// servers and a skill) and beta.tools (one stdio server), all running the
// SDK-built test server.
func gatewayPlugins(t *testing.T) (alpha, beta string) {
	alpha = writeNamedPlugin(t, "alpha", `{
		"one": {"type": "stdio", "command": "./bin/run"},
		"two": {"type": "stdio", "command": "./bin/run", "env": {"TESTSERVER_EXTRA_TOOLS": "read.file"}}}`,
		map[string]string{"skills/guide/SKILL.md": "---\nname: guide\ndescription: How to use alpha.\n---\nUse alpha_one_echo.\n",
			"skills/guide/ref/notes.md": "notes", "secret.txt": "outside the skill"})
	beta = writeNamedPlugin(t, "beta.tools", `{"one": {"type": "stdio", "command": "./bin/run"}}`, nil)
	return alpha, beta
}

// writeNamedPlugin writes a plugin whose bin/run starts the test server.
func writeNamedPlugin(t testing.TB, name, servers string, files map[string]string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), name)
	all := map[string]string{
		"plugin.json": `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "` + name + `"}`,
		"mcp.json":    `{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": ` + servers + `}`,
		"bin/run":     "#!/bin/sh\nexec '" + testServerBin(t) + "' \"$@\"\n",
	}
	for p, c := range files {
		all[p] = c
	}
	for p, c := range all {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// gatewayProc is a plugkit gateway running as a process.
type gatewayProc struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan struct{}
}

// syncBuffer collects a process's stderr.
type syncBuffer struct {
	mu   sync.Mutex
	b    strings.Builder
	url  chan string
	seen bool
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Write(p)
	if m := regexp.MustCompile(`url=(http://\S+/mcp)`).FindStringSubmatch(s.b.String()); m != nil && !s.seen {
		s.seen = true
		s.url <- m[1]
	}
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// gatewayCmd is the command of a gateway with a private home.
func gatewayCmd(t *testing.T, home string, args ...string) (*exec.Cmd, *syncBuffer) {
	bin := testbin.Plugkit(t)
	cmd := exec.Command(bin, append([]string{"gateway", "--home", home}, args...)...)
	cmd.Env = append(os.Environ(), "PLUGKIT_HOME="+home)
	errb := &syncBuffer{url: make(chan string, 1)}
	cmd.Stderr = errb
	return cmd, errb
}

// stdioGateway starts a stdio gateway and connects a client to it, with
// notifications counted in changes.
func stdioGateway(t *testing.T, home string, changes chan string, args ...string) (*mcp.ClientSession, *gatewayProc) {
	t.Helper()
	cmd, errb := gatewayCmd(t, home, args...)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, notifyOptions(changes))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sess, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connecting to the gateway: %v\n%s", err, errb.String())
	}
	g := &gatewayProc{cmd: cmd, stderr: errb}
	t.Cleanup(func() {
		sess.Close()
		if cmd.Process != nil {
			cmd.Process.Kill()
		}
	})
	return sess, g
}

func notifyOptions(changes chan string) *mcp.ClientOptions {
	note := func(what string) {
		if changes != nil {
			select {
			case changes <- what:
			default:
			}
		}
	}
	return &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { note("tools") },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { note("prompts") },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { note("resources") },
	}
}

func listTools(t *testing.T, sess *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range sess.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	return names
}

func callInfo(t *testing.T, sess *mcp.ClientSession, name string) (pid int, env []string) {
	t.Helper()
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: name})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %+v", name, err, res)
	}
	var out struct {
		PID int
		Env []string
	}
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &out)
	return out.PID, out.Env
}

func spawnChild(t *testing.T, sess *mcp.ClientSession, name string, args map[string]any) int {
	t.Helper()
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %+v", name, err, res)
	}
	var out struct{ PID int }
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &out)
	return out.PID
}

// callEvery calls every tool the gateway lists, each with arguments it
// accepts, and returns the pids of the processes the calls reported
// (servers, and children the spawn tools started).
func callEvery(t *testing.T, sess *mcp.ClientSession) []int {
	t.Helper()
	var pids []int
	for tool, err := range sess.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		// Hashed names hide the server's tool name; the test server's
		// descriptions tell them apart.
		args := map[string]any{}
		switch tool.Description {
		case "wait, or until cancelled":
			args["ms"] = 1
		case "write a file in PLUGIN_DATA":
			args["name"], args["content"] = "f", "x"
		case "report a tool error":
			args["text"] = "on purpose"
		}
		res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: tool.Name, Arguments: args})
		if err != nil || res.IsError != (tool.Description == "report a tool error") {
			t.Errorf("%s: %v %+v", tool.Name, err, res)
			continue
		}
		var out struct{ PID int }
		json.Unmarshal(mustJSON(res.StructuredContent), &out)
		if out.PID != 0 {
			pids = append(pids, out.PID)
		}
	}
	return pids
}

// pidAlive reports whether pid is a live process.
var pidAlive = testservice.Alive

// waitGone waits until none of pids lives, and fails on survivors.
func waitGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for slices.ContainsFunc(pids, pidAlive) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	for _, pid := range pids {
		if pidAlive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("process %d survived the gateway", pid)
		}
	}
}

// TestGatewayStdio is the gateway over stdio: every tool of two
// plugins listed and callable, skills as prompts and resources, escapes
// refused, a killed server reported and restarted, and nothing left
// running once the client closes the gateway's stdin.
func TestGatewayStdio(t *testing.T) {
	alpha, beta := gatewayPlugins(t)
	home := t.TempDir()
	sess, g := stdioGateway(t, home, nil, alpha, beta)
	ctx := context.Background()

	tools := listTools(t, sess)
	for _, want := range []string{"alpha_one_echo", "alpha_one_info", "alpha_two_echo", host.ToolName("alpha", "two", "read.file"),
		host.ToolName("beta.tools", "one", "echo")} {
		if !slices.Contains(tools, want) {
			t.Errorf("tools/list lacks %s: %q", want, tools)
		}
	}
	if len(tools) != 6+7+6 {
		t.Errorf("%d tools, want 19: %q", len(tools), tools)
	}
	// The mapping is in each renamed tool's _meta.
	for tool, err := range sess.Tools(ctx, nil) {
		if err == nil && tool.Name == host.ToolName("alpha", "two", "read.file") &&
			(tool.Meta[host.MetaServer] != "alpha/two" || tool.Meta[host.MetaName] != "read.file") {
			t.Errorf("%s: _meta %v, want its server and its name there", tool.Name, tool.Meta)
		}
	}
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: host.ToolName("alpha", "two", "read.file")})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "I am read.file" {
		t.Errorf("hashed tool name: %v %+v", err, res)
	}
	res, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: "alpha_one_echo", Arguments: map[string]any{"n": 1}})
	if err != nil || !strings.Contains(string(mustJSON(res.StructuredContent)), `"n":1`) {
		t.Errorf("echo: %v %+v", err, res)
	}
	if _, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "alpha_one_nosuch"}); err == nil {
		t.Error("an unknown tool must be a protocol error")
	}
	pids := callEvery(t, sess)
	p1, env := callInfo(t, sess, "alpha_one_info")
	pids = append(pids, p1)
	if !slices.ContainsFunc(env, func(kv string) bool {
		return strings.HasPrefix(kv, "PLUGIN_DATA="+filepath.Join(home, "adhoc", "alpha-"))
	}) {
		t.Errorf("ad-hoc PLUGIN_DATA missing: %q", env)
	}

	// Skills: prompts and resources.
	prompt, err := sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: "alpha/guide"})
	if err != nil || !strings.Contains(prompt.Messages[0].Content.(*mcp.TextContent).Text, "Use alpha_one_echo.") ||
		!strings.Contains(prompt.Messages[0].Content.(*mcp.TextContent).Text, "skill://alpha/guide/ref/notes.md") {
		t.Errorf("skill prompt: %v %+v", err, prompt)
	}
	var prompts []string
	for p, err := range sess.Prompts(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		prompts = append(prompts, p.Name)
		if p.Name == "alpha_one_greet" && (p.Meta[host.MetaServer] != "alpha/one" || p.Meta[host.MetaName] != "greet") {
			t.Errorf("%s: _meta %v", p.Name, p.Meta)
		}
	}
	if !slices.Contains(prompts, "alpha/guide") || !slices.Contains(prompts, "alpha_one_greet") {
		t.Errorf("prompts %q", prompts)
	}
	var uris []string
	for r, err := range sess.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	for _, want := range []string{"skill://alpha/guide/SKILL.md", "skill://alpha/guide/ref/notes.md", "plugin://alpha/one/test://static"} {
		if !slices.Contains(uris, want) {
			t.Errorf("resources lack %s: %q", want, uris)
		}
	}
	read, err := sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://alpha/guide/ref/notes.md"})
	if err != nil || read.Contents[0].Text != "notes" {
		t.Errorf("read skill file: %v %+v", err, read)
	}
	for _, escape := range []string{"skill://alpha/guide/../../secret.txt", "skill://alpha/guide/%2e%2e/%2e%2e/secret.txt",
		"skill://alpha/guide/ref/..%2F..%2F..%2Fsecret.txt", "skill://alpha/guide//etc/passwd"} {
		if r, err := sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: escape}); err == nil {
			t.Errorf("%s was served: %+v", escape, r)
		}
	}
	if r, err := sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: "plugin://alpha/one/test://echo/hi"}); err != nil || r.Contents[0].Text != "echo hi" {
		t.Errorf("forwarded template: %v %+v", err, r)
	}

	// A server killed mid-session is reported and restarted.
	syscall.Kill(p1, syscall.SIGKILL)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(g.stderr.String(), "server exited") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(g.stderr.String(), `server exited" server=alpha/one reason="signal: killed"`) {
		t.Errorf("the exit was not reported:\n%s", g.stderr.String())
	}
	p2, _ := callInfo(t, sess, "alpha_one_info")
	if p2 == p1 {
		t.Error("the killed server was not restarted")
	}
	pids = append(pids, p2)
	for _, name := range []string{"alpha_two_info", host.ToolName("beta.tools", "one", "info")} {
		pid, _ := callInfo(t, sess, name)
		pids = append(pids, pid)
	}
	pids = append(pids, spawnChild(t, sess, "alpha_one_spawn", map[string]any{"setsid": true}),
		spawnChild(t, sess, "alpha_two_spawn", map[string]any{"orphan": true}),
		spawnChild(t, sess, "alpha_two_spawn", nil))

	// Closing stdin ends the gateway and every process.
	begin := time.Now()
	if err := sess.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if d := time.Since(begin); d > 10*time.Second {
		t.Errorf("the gateway took %v to exit after its stdin closed", d)
	}
	if code := g.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("gateway exit %d\n%s", code, g.stderr.String())
	}
	waitGone(t, pids)
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestGatewayHTTP is the gateway over Streamable HTTP: the token rules,
// every tool callable, and SIGTERM ending it with every process.
func TestGatewayHTTP(t *testing.T) {
	alpha, beta := gatewayPlugins(t)
	home := t.TempDir()

	// Off loopback a token is required; with one it is always checked.
	for _, args := range [][]string{{"--http", "0.0.0.0:0", alpha}, {"--http", ":0", alpha}} {
		if code, _, stderr := runCLI(t, append([]string{"gateway", "--home", home}, args...)...); code != command.ExitUsage || !strings.Contains(stderr, "PLUGKIT_GATEWAY_TOKEN") {
			t.Errorf("gateway %q without a token: exit %d, %s", args, code, stderr)
		}
	}
	if code, _, _ := runCLI(t, "gateway", "--home", home, "--token-file", filepath.Join(home, "none"), alpha); code != command.ExitUsage {
		t.Errorf("--token-file without --http: exit %d, want 2", code)
	}

	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("t0ken-5678\n"), 0o600)
	cmd, errb := gatewayCmd(t, home, "--http", "127.0.0.1:0", "--token-file", tokenFile, "--http-body-timeout", "1s", alpha, beta)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var url string
	select {
	case url = <-errb.url:
	case <-time.After(60 * time.Second):
		t.Fatalf("no listening address:\n%s", errb.String())
	}
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil || resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("no token: %v %+v", err, resp)
	}
	if resp != nil {
		resp.Body.Close()
	}

	// A client that drips its request body is cut off, not waited for.
	conn, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer t0ken-5678\r\n"+
		"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{")
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	status, _ := bufio.NewReader(conn).ReadString('\n')
	if !strings.Contains(status, "408") {
		t.Errorf("a slow body got %q, want 408 after --http-body-timeout", status)
	}
	conn.Close()

	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	hc := &http.Client{Transport: bearer{"t0ken-5678", http.DefaultTransport}}
	sess, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, errb.String())
	}
	defer sess.Close()
	tools := listTools(t, sess)
	if len(tools) != 6+7+6 || !slices.Contains(tools, host.ToolName("beta.tools", "one", "echo")) {
		t.Errorf("tools %q", tools)
	}
	pids := callEvery(t, sess)
	for _, name := range []string{"alpha_one_info", "alpha_two_info", host.ToolName("beta.tools", "one", "info")} {
		pid, _ := callInfo(t, sess, name)
		pids = append(pids, pid)
	}
	pids = append(pids, spawnChild(t, sess, "alpha_one_spawn", map[string]any{"setsid": true}))

	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("gateway after SIGTERM: %v\n%s", err, errb.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("the gateway did not exit on SIGTERM\n%s", errb.String())
	}
	waitGone(t, pids)
	if strings.Contains(errb.String(), "t0ken-5678") {
		t.Error("the token was logged")
	}
}

// TestGatewayHTTPTokenFromEnvironment: the token may come from
// PLUGKIT_GATEWAY_TOKEN instead of a file, and is then checked the same
// way; a request naming another host than the loopback address the
// gateway is bound to is refused even with the token (DNS rebinding).
func TestGatewayHTTPTokenFromEnvironment(t *testing.T) {
	alpha, _ := gatewayPlugins(t)
	t.Setenv(gatewayTokenEnv, "env-t0ken-42")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errb := &syncBuffer{url: make(chan string, 1)}
	exit := make(chan int, 1)
	go func() {
		exit <- program().RunContext(ctx, factory.Quiet(io.Discard, errb), []string{"gateway", "--home", t.TempDir(), "--http", "127.0.0.1:0", alpha})
	}()
	var url string
	select {
	case url = <-errb.url:
	case code := <-exit:
		t.Fatalf("the gateway exited %d:\n%s", code, errb.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("no listening address:\n%s", errb.String())
	}
	post := func(token, hostHeader string) int {
		t.Helper()
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if hostHeader != "" {
			req.Host = hostHeader
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		token, host string
		want        int
	}{
		{"", "", http.StatusUnauthorized},
		{"wrong", "", http.StatusUnauthorized},
		{"env-t0ken-42", "attacker.example:80", http.StatusForbidden},
		{"env-t0ken-42", "", http.StatusOK},
	} {
		if got := post(c.token, c.host); got != c.want {
			t.Errorf("token %q, Host %q: HTTP %d, want %d", c.token, c.host, got, c.want)
		}
	}
	cancel()
	select {
	case code := <-exit:
		if code != command.ExitOK {
			t.Errorf("exit %d after the context ended\n%s", code, errb.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the gateway did not stop")
	}
	if strings.Contains(errb.String(), "env-t0ken-42") {
		t.Error("the token was logged")
	}
}

// bearer adds the gateway token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// TestGatewayFollowsTheHome: serving a home, the gateway picks up a
// plugin installed or removed while it runs, without a restart, and
// tells the client with list_changed notifications.
func TestGatewayFollowsTheHome(t *testing.T) {
	alpha, beta := gatewayPlugins(t)
	home := t.TempDir()
	if code, _, stderr := runCLI(t, "install", "--yes", "--home", home, alpha); code != 0 {
		t.Fatalf("install: %s", stderr)
	}
	changes := make(chan string, 16)
	sess, g := stdioGateway(t, home, changes, "--watch-interval", "100ms")
	before := listTools(t, sess)
	if !slices.Contains(before, "alpha_one_echo") || slices.ContainsFunc(before, func(s string) bool { return strings.HasPrefix(s, "beta") }) {
		t.Fatalf("tools before: %q", before)
	}
	pid, env := callInfo(t, sess, "alpha_one_info")
	if !slices.Contains(env, "PLUGIN_DATA="+filepath.Join(home, "data", "alpha")) {
		t.Errorf("installed plugin's PLUGIN_DATA: %q", env)
	}

	// Every change of the plugins changes all three lists, and the client
	// hears of each.
	waitChange := func() {
		t.Helper()
		deadline := time.After(20 * time.Second)
		missing := map[string]bool{"tools": true, "prompts": true, "resources": true}
		for len(missing) > 0 {
			select {
			case c := <-changes:
				delete(missing, c)
			case <-deadline:
				t.Fatalf("no list_changed notification for %v\n%s", slices.Sorted(maps.Keys(missing)), g.stderr.String())
			}
		}
	}
	if code, _, stderr := runCLI(t, "install", "--yes", "--home", home, beta); code != 0 {
		t.Fatalf("install beta: %s", stderr)
	}
	waitChange()
	after := listTools(t, sess)
	if !slices.Contains(after, host.ToolName("beta.tools", "one", "echo")) || !slices.Contains(after, "alpha_one_echo") {
		t.Errorf("tools after installing beta.tools: %q", after)
	}
	if p2, _ := callInfo(t, sess, "alpha_one_info"); p2 != pid {
		t.Error("installing another plugin restarted alpha's server")
	}

	// An update (a server that gains a tool) restarts alpha's servers.
	os.WriteFile(filepath.Join(alpha, "mcp.json"), []byte(`{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {
		"one": {"type": "stdio", "command": "./bin/run", "env": {"TESTSERVER_EXTRA_TOOLS": "added"}},
		"two": {"type": "stdio", "command": "./bin/run", "env": {"TESTSERVER_EXTRA_TOOLS": "read.file"}}}}`), 0o644)
	if code, _, stderr := runCLI(t, "update", "--yes", "--home", home, "alpha"); code != 0 {
		t.Fatalf("update alpha: %s", stderr)
	}
	waitChange()
	if tools := listTools(t, sess); !slices.Contains(tools, "alpha_one_added") {
		t.Errorf("tools after updating alpha: %q", tools)
	}
	waitGone(t, []int{pid})
	pid, _ = callInfo(t, sess, "alpha_one_info")

	if code, _, stderr := runCLI(t, "remove", "--home", home, "alpha"); code != 0 {
		t.Fatalf("remove alpha: %s", stderr)
	}
	waitChange()
	if tools := listTools(t, sess); slices.Contains(tools, "alpha_one_echo") {
		t.Errorf("tools after removing alpha: %q", tools)
	}
	waitGone(t, []int{pid})
	var prompts []string
	for p, err := range sess.Prompts(context.Background(), nil) {
		if err == nil {
			prompts = append(prompts, p.Name)
		}
	}
	if slices.Contains(prompts, "alpha/guide") {
		t.Errorf("a removed plugin's skill is still a prompt: %q", prompts)
	}
	for r, err := range sess.Resources(context.Background(), nil) {
		if err == nil && strings.HasPrefix(r.URI, "skill://alpha/") {
			t.Errorf("a removed plugin's skill file is still a resource: %s", r.URI)
		}
	}
}

// TestGatewayOverlaysNeverLogged: credentials from the host configuration
// reach the servers but never the gateway's log, even when servers fail.
func TestGatewayOverlaysNeverLogged(t *testing.T) {
	root := writeNamedPlugin(t, "p", `{
		"ok":    {"type": "stdio", "command": "./bin/run"},
		"crash": {"type": "stdio", "command": "./bin/run", "env": {"TESTSERVER_CRASH": "bad start"}},
		"down":  {"type": "streamable-http", "url": "http://127.0.0.1:1/mcp"}}`, nil)
	home := t.TempDir()
	cfg := filepath.Join(home, "host.json")
	os.WriteFile(cfg, []byte(`{"servers": {
		"p/ok":    {"env": {"KEY": "v-0577215664"}},
		"p/crash": {"env": {"KEY": "v-0577215664"}},
		"p/down":  {"headers": {"Authorization": "Bearer v-1414213562"}}}}`), 0o600)
	sess, g := stdioGateway(t, home, nil, "--eager", root)
	_, env := callInfo(t, sess, "p_ok_info")
	if !slices.Contains(env, "KEY=v-0577215664") {
		t.Errorf("overlay missing from the server's environment: %q", env)
	}
	listTools(t, sess)
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "p_crash_info"})
	if err != nil || !res.IsError {
		t.Errorf("a failed server's tool: %v %+v", err, res)
	}
	sess.Close()
	log := g.stderr.String()
	if !strings.Contains(log, "p/crash") || !strings.Contains(log, "p/down") {
		t.Errorf("the failures were not logged:\n%s", log)
	}
	for _, secret := range []string{"v-0577215664", "v-1414213562"} {
		if strings.Contains(log, secret) {
			t.Errorf("an overlay value was logged:\n%s", log)
		}
	}
}

// TestGatewayUsage: bad arguments exit 2 before anything starts.
func TestGatewayUsage(t *testing.T) {
	alpha, _ := gatewayPlugins(t)
	home := t.TempDir()
	for _, args := range [][]string{
		{"--http", "nonsense"},
		{"--watch-interval", "0s"},
		{"--timeout", "-1s"},
		{filepath.Join(home, "missing")},
		{alpha, alpha},
	} {
		code, _, stderr := runCLI(t, append([]string{"gateway", "--home", home}, args...)...)
		if code != command.ExitUsage {
			t.Errorf("gateway %q: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
	code, stdout, _ := runCLI(t, "gateway", "--help")
	if code != 0 || !strings.Contains(stdout, `{"mcpServers": {"plugkit": {"command": "plugkit", "args": ["gateway"]}}}`) {
		t.Errorf("gateway --help must show the client configuration:\n%s", stdout)
	}
}

// TestGatewayReloadsArgumentsOnSIGHUP: serving plugins named as arguments,
// SIGHUP reads them again; a changed one is restarted and clients are
// notified, an unchanged one keeps its servers.
func TestGatewayReloadsArgumentsOnSIGHUP(t *testing.T) {
	alpha, beta := gatewayPlugins(t)
	changes := make(chan string, 16)
	sess, g := stdioGateway(t, t.TempDir(), changes, alpha, beta)
	alphaPID, _ := callInfo(t, sess, "alpha_one_info")
	betaPID, _ := callInfo(t, sess, host.ToolName("beta.tools", "one", "info"))

	os.WriteFile(filepath.Join(beta, "mcp.json"), []byte(`{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {
		"one": {"type": "stdio", "command": "./bin/run", "env": {"TESTSERVER_EXTRA_TOOLS": "fresh"}}}}`), 0o644)
	g.cmd.Process.Signal(syscall.SIGHUP)
	select {
	case <-changes:
	case <-time.After(20 * time.Second):
		t.Fatalf("no list_changed notification after SIGHUP\n%s", g.stderr.String())
	}
	if tools := listTools(t, sess); !slices.Contains(tools, host.ToolName("beta.tools", "one", "fresh")) {
		t.Errorf("tools after SIGHUP: %q", tools)
	}
	waitGone(t, []int{betaPID})
	if pid, _ := callInfo(t, sess, "alpha_one_info"); pid != alphaPID {
		t.Error("SIGHUP restarted the unchanged plugin alpha")
	}
	betaPID, _ = callInfo(t, sess, host.ToolName("beta.tools", "one", "info"))

	// A stdio gateway also stops on SIGTERM, with every process: its
	// servers end while its stdin is still open, and it exits 0.
	g.cmd.Process.Signal(syscall.SIGTERM)
	waitGone(t, []int{alphaPID, betaPID})
	sess.Close() // reaps the gateway
	if st := g.cmd.ProcessState; st == nil || st.ExitCode() != 0 {
		t.Errorf("the stdio gateway after SIGTERM: %v\n%s", st, g.stderr.String())
	}
}
