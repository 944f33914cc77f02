package host

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/internal/syncbuf"
	"github.com/plugkit/plugkit/internal/testbin"
	"github.com/plugkit/plugkit/internal/testservice"
)

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }

// pluginSpec describes a plugin directory for writePlugin.
type pluginSpec struct {
	name    string
	servers string            // the mcpServers object, "" for no mcp.json
	skills  map[string]string // skill name → SKILL.md body
	files   map[string]string // more files, by package path
}

// writePlugin writes a plugin directory with the test server at
// bin/server and returns its path.
func writePlugin(t testing.TB, spec pluginSpec) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), spec.name)
	files := map[string]string{
		"plugin.json": `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "` + spec.name + `"}`,
	}
	if spec.servers != "" {
		files["mcp.json"] = `{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": ` + spec.servers + `}`
	}
	for name, body := range spec.skills {
		files["skills/"+name+"/SKILL.md"] = "---\nname: " + name + "\ndescription: The " + name + " skill.\n---\n" + body
	}
	for p, content := range spec.files {
		files[p] = content
	}
	for p, content := range files {
		mustWrite(t, filepath.Join(root, filepath.FromSlash(p)), content)
	}
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(testservice.MCPServer(t), filepath.Join(root, "bin", "server")); err != nil {
		t.Fatal(err)
	}
	return root
}

func mustWrite(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// loadPlugin loads a plugin directory as a host Plugin with a private
// data directory.
func loadPlugin(t testing.TB, root string) Plugin {
	t.Helper()
	pkg, err := agentplugin.LoadDir(root, agentplugin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range pkg.Diagnostics {
		t.Logf("%s: %s", root, d)
	}
	return Plugin{Package: pkg, Root: root, DataDir: filepath.Join(t.TempDir(), "data")}
}

// newHost makes a host that is closed when the test ends.
func newHost(t testing.TB, plugins []Plugin, opts Options) *Host {
	t.Helper()
	if opts.Launch.ShutdownTimeout == 0 {
		opts.Launch.ShutdownTimeout = 300 * time.Millisecond
	}
	if opts.Launch.BaseEnv == nil {
		opts.Launch.BaseEnv = []string{}
	}
	h, err := New(plugins, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

// remoteServer is a Streamable HTTP MCP server on 127.0.0.1 with a tool
// "ping", recording the headers of the requests it gets.
type remoteServer struct {
	URL     string
	mu      sync.Mutex
	headers []http.Header
}

func newRemote(t testing.TB) *remoteServer {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "ping"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, struct{}{}, nil
	})
	r := &remoteServer{}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.headers = append(r.headers, req.Header.Clone())
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(hs.Close)
	r.URL = hs.URL + "/mcp"
	return r
}

// sawHeader reports whether some request carried the header with value.
func (r *remoteServer) sawHeader(name, value string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, h := range r.headers {
		if h.Get(name) == value {
			return true
		}
	}
	return false
}

// callJSON calls a tool through the host and decodes its structured
// result into out.
func callJSON(t testing.TB, h *Host, name string, args map[string]any, out any) {
	t.Helper()
	res, err := h.CallTool(context.Background(), name, args)
	if err != nil {
		t.Fatalf("CallTool %s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("CallTool %s: tool error %+v", name, res.Content)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}

type serverInfo struct {
	Args []string `json:"args"`
	Env  []string `json:"env"`
	Cwd  string   `json:"cwd"`
	PID  int      `json:"pid"`
}

// alive reports whether pid is a live process.
var alive = testservice.Alive

// waitFor polls cond until it holds or a generous deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// statusOf returns the status of one server of h.
func statusOf(t testing.TB, h *Host, id string) ServerStatus {
	t.Helper()
	for _, s := range h.Servers() {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no server %s", id)
	return ServerStatus{}
}

// logger is a Logger writing into log.
func logger(log *syncbuf.Buffer) *slog.Logger { return slog.New(slog.NewTextHandler(log, nil)) }
