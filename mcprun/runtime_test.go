package mcprun

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/internal/testservice"
)

// startPlugin starts pkg's servers and closes them when the test ends.
func startPlugin(t *testing.T, pkg *agentplugin.Package, opts StartOptions) *Runtime {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rt, err := Start(ctx, pkg, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := rt.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return rt
}

func status(t *testing.T, rt *Runtime, id string) ServerStatus {
	t.Helper()
	for _, s := range rt.Servers() {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no server %s", id)
	return ServerStatus{}
}

// callTool calls a tool of a ready server and decodes its structured
// result into out.
func callTool(t *testing.T, rt *Runtime, id, tool string, args map[string]any, out any) {
	t.Helper()
	s := rt.Session(id)
	if s == nil {
		t.Fatalf("%s is not ready: %+v", id, status(t, rt, id))
	}
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %s: %v", id, tool, err)
	}
	if res.IsError {
		t.Fatalf("%s %s: tool error %+v", id, tool, res.Content)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}

type serverInfo struct {
	Args []string `json:"args"`
	Env  []string `json:"env"`
	Cwd  string   `json:"cwd"`
}

// alive reports whether pid is a live process.
var alive = testservice.Alive

func TestSpec91_ServerSeesExactlyItsLaunchPlan(t *testing.T) {
	root := filepath.Join(t.TempDir(), "plug in ${PLUGIN_DATA}") // a space and a placeholder in the root
	mustMkdir(t, root)
	root, _ = filepath.EvalSymlinks(root)
	installServer(t, root, "my bin/my server")
	opts := StartOptions{PlanOptions: baseOptions(t, root)}
	opts.BaseEnv = []string{"KEEP=base", "OVER=base", "PLUGIN_DATA=/spoofed"}
	srv := agentplugin.Server{ID: "p/s", Name: "s", Type: agentplugin.Stdio, Command: "./my bin/my server",
		Args: []string{"two words", "", "${PLUGIN_ROOT}/cfg", "$HOME", "${PLUGIN_ROOT_SUFFIX}"},
		Env:  map[string]string{"OVER": "configured", "D": "${PLUGIN_DATA}/x"},
		Cwd:  "${PLUGIN_DATA}"}
	rt := startPlugin(t, &agentplugin.Package{Name: "p", Servers: []agentplugin.Server{srv}}, opts)

	var got serverInfo
	callTool(t, rt, "p/s", "info", nil, &got)
	data := opts.DataDir
	wantArgs := []string{filepath.Join(root, "my bin/my server"), "two words", "", root + "/cfg", "$HOME", "${PLUGIN_ROOT_SUFFIX}"}
	if !slices.Equal(got.Args, wantArgs) {
		t.Errorf("argv = %q, want %q", got.Args, wantArgs)
	}
	env := envMap(t, got.Env)
	for k, v := range map[string]string{"KEEP": "base", "OVER": "configured", "D": data + "/x", "PLUGIN_ROOT": root, "PLUGIN_DATA": data} {
		if env[k] != v {
			t.Errorf("server env %s = %q, want %q", k, env[k], v)
		}
	}
	if got.Cwd != data {
		t.Errorf("cwd = %q, want %q", got.Cwd, data)
	}

	var w struct{ Path string }
	callTool(t, rt, "p/s", "write", map[string]any{"name": "state.txt", "content": "kept"}, &w)
	if b, err := os.ReadFile(filepath.Join(data, "state.txt")); err != nil || string(b) != "kept" {
		t.Errorf("file in PLUGIN_DATA: %q, %v", b, err)
	}
	if fi, err := os.Stat(data); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("PLUGIN_DATA mode: %v %v, want 0700", fi, err)
	}
}

func TestSpec722_OneFailingServerDoesNotStopTheOthers(t *testing.T) {
	root := newRoot(t)
	installServer(t, root, "bin/server")
	crash := stdioServer("p", "crash")
	crash.Env = map[string]string{"TESTSERVER_CRASH": "boom: cannot open database"}
	escape := stdioServer("p", "escape")
	escape.Cwd = "./.."
	missing := agentplugin.Server{ID: "p/missing", Name: "missing", Type: agentplugin.Stdio, Command: "no-such-program-mcprun"}
	remote := agentplugin.Server{ID: "p/remote", Name: "remote", Type: agentplugin.SSE, URL: "http://127.0.0.1:1/sse"}
	pkg := &agentplugin.Package{Name: "p", Servers: []agentplugin.Server{
		crash, stdioServer("p", "good"), escape, missing, remote, stdioServer("p", "good2")}}
	opts := StartOptions{PlanOptions: baseOptions(t, root), Transports: []agentplugin.Transport{agentplugin.Stdio}}
	rt := startPlugin(t, pkg, opts)

	want := map[string]Status{"p/crash": StatusFailed, "p/good": StatusReady, "p/escape": StatusSkipped,
		"p/missing": StatusFailed, "p/remote": StatusSkipped, "p/good2": StatusReady}
	for _, s := range rt.Servers() {
		if s.Status != want[s.ID] {
			t.Errorf("%s: %s (%s), want %s", s.ID, s.Status, s.Reason, want[s.ID])
		}
	}
	if s := status(t, rt, "p/crash"); !strings.Contains(s.Stderr, "boom: cannot open database") || s.Reason == "" {
		t.Errorf("crash: reason %q stderr %q, want the stderr tail", s.Reason, s.Stderr)
	}
	if s := status(t, rt, "p/escape"); !errors.Is(s.Err, ErrEscape) {
		t.Errorf("escape: %v, want ErrEscape", s.Err)
	}
	if s := status(t, rt, "p/remote"); !errors.Is(s.Err, ErrUnsupportedTransport) {
		t.Errorf("remote: %v, want ErrUnsupportedTransport", s.Err)
	}
	if s := status(t, rt, "p/missing"); !errors.Is(s.Err, ErrNotFound) {
		t.Errorf("missing: %v, want ErrNotFound", s.Err)
	}
	var got serverInfo
	callTool(t, rt, "p/good2", "info", nil, &got)
}

func TestSpec41_CommandLinkLeavingRootIsNeverExecuted(t *testing.T) {
	root := newRoot(t)
	marker := filepath.Join(t.TempDir(), "executed")
	outside := filepath.Join(t.TempDir(), "evil")
	mustWrite(t, outside, "#!/bin/sh\ntouch '"+marker+"'\n", 0o755)
	mustSymlink(t, outside, filepath.Join(root, "bin/server"))
	rt := startPlugin(t, &agentplugin.Package{Name: "p", Servers: []agentplugin.Server{stdioServer("p", "s")}},
		StartOptions{PlanOptions: baseOptions(t, root)})
	if s := status(t, rt, "p/s"); s.Status != StatusSkipped || !errors.Is(s.Err, ErrEscape) {
		t.Errorf("status %s (%v), want skipped with ErrEscape", s.Status, s.Err)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the program outside the root ran")
	}
}

func TestCloseLeavesNoProcess(t *testing.T) {
	root := newRoot(t)
	installServer(t, root, "bin/server")
	opts := StartOptions{PlanOptions: baseOptions(t, root), ShutdownTimeout: 500 * time.Millisecond}
	rt, err := Start(context.Background(), &agentplugin.Package{Name: "p", Servers: []agentplugin.Server{stdioServer("p", "s")}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	var child struct{ PID int }
	callTool(t, rt, "p/s", "spawn", nil, &child)
	server := rt.conns[0].proc.pid()
	if !alive(child.PID) || !alive(server) {
		t.Fatalf("child %d or server %d not running before Close", child.PID, server)
	}
	begin := time.Now()
	if err := rt.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	t.Logf("Close took %v", time.Since(begin))
	for deadline := time.Now().Add(2 * time.Second); alive(child.PID) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond) // a SIGKILL is delivered asynchronously
	}
	if alive(child.PID) || alive(server) {
		t.Fatalf("after Close: child alive %v, server alive %v", alive(child.PID), alive(server))
	}
	if err := rt.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestHandshakeTimeoutFailsOnlyThatServer(t *testing.T) {
	root := newRoot(t)
	installServer(t, root, "bin/server")
	slow := stdioServer("p", "slow")
	slow.Env = map[string]string{"TESTSERVER_DELAY": "20s"}
	opts := StartOptions{PlanOptions: baseOptions(t, root), HandshakeTimeout: 300 * time.Millisecond, ShutdownTimeout: 100 * time.Millisecond}
	begin := time.Now()
	rt := startPlugin(t, &agentplugin.Package{Name: "p", Servers: []agentplugin.Server{slow, stdioServer("p", "fast")}}, opts)
	if s := status(t, rt, "p/slow"); s.Status != StatusFailed || !errors.Is(s.Err, ErrTimeout) {
		t.Errorf("slow: %s (%v), want failed with ErrTimeout", s.Status, s.Err)
	}
	if s := status(t, rt, "p/fast"); s.Status != StatusReady {
		t.Errorf("fast: %s (%s)", s.Status, s.Reason)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("Start took %v with a 300ms handshake timeout", d)
	}
}
