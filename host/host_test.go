package host

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plugkit/plugkit/internal/syncbuf"
	"github.com/plugkit/plugkit/mcprun"
)

var toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// twoPlugins is the test host: two plugins of several servers each,
// stdio and streamable HTTP.
func twoPlugins(t *testing.T) (alpha, beta Plugin, remote *remoteServer) {
	remote = newRemote(t)
	alpha = loadPlugin(t, writePlugin(t, pluginSpec{name: "alpha", servers: `{
		"one": {"type": "stdio", "command": "./bin/server"},
		"two": {"type": "stdio", "command": "./bin/server", "env": {"TESTSERVER_EXTRA_TOOLS": "read.file,x"}},
		"web": {"type": "streamable-http", "url": "` + remote.URL + `"}}`}))
	beta = loadPlugin(t, writePlugin(t, pluginSpec{name: "beta.tools", servers: `{
		"one": {"type": "stdio", "command": "./bin/server"},
		"under_score": {"type": "stdio", "command": "./bin/server"}}`}))
	return alpha, beta, remote
}

func toolNames(ts []Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func TestEveryToolListedAndCallable(t *testing.T) {
	alpha, beta, _ := twoPlugins(t)
	h := newHost(t, []Plugin{alpha, beta}, Options{})
	ctx := context.Background()
	tools, err := h.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	perServer := map[string]int{}
	for _, tl := range tools {
		perServer[tl.ServerID]++
		if !toolNameRE.MatchString(tl.Name) {
			t.Errorf("tool %s of %s: name %q not accepted by strict clients", tl.Def.Name, tl.ServerID, tl.Name)
		}
		if want := ToolName(tl.Plugin, strings.TrimPrefix(tl.ServerID, tl.Plugin+"/"), tl.Def.Name); tl.Name != want {
			t.Errorf("tool %s: name %q, want ToolName's %q", tl.Def.Name, tl.Name, want)
		}
	}
	want := map[string]int{"alpha/one": 6, "alpha/two": 8, "alpha/web": 1, "beta.tools/one": 6, "beta.tools/under_score": 6}
	for id, n := range want {
		if perServer[id] != n {
			t.Errorf("%s: %d tools, want %d (all: %q)", id, perServer[id], n, toolNames(tools))
		}
	}
	if !slices.IsSorted(toolNames(tools)) {
		t.Error("tools are not sorted by name")
	}
	// Every tool is callable by its host name, and reaches its own server.
	for _, tl := range tools {
		switch tl.Def.Name {
		case "info":
			var got serverInfo
			callJSON(t, h, tl.Name, nil, &got)
			if !slices.Contains(got.Env, "PLUGIN_ROOT="+mustReal(t, rootOf(h, tl.Plugin))) {
				t.Errorf("%s ran in the wrong plugin: %q", tl.Name, got.Env)
			}
		case "ping", "x", "read.file":
			res, err := h.CallTool(ctx, tl.Name, nil)
			if err != nil || res.IsError || len(res.Content) != 1 {
				t.Errorf("%s: %v %+v", tl.Name, err, res)
			}
		}
	}
	if _, err := h.CallTool(ctx, "alpha_one_nosuch", nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown tool: %v, want ErrNotFound", err)
	}
}

func rootOf(h *Host, name string) string {
	for _, p := range h.Plugins() {
		if p.Package.Name == name {
			return p.Root
		}
	}
	return ""
}

func mustReal(t *testing.T, p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestLazyStartStartsOnlyWhatIsNeeded(t *testing.T) {
	alpha, beta, _ := twoPlugins(t)
	begin := time.Now()
	h := newHost(t, []Plugin{alpha, beta}, Options{})
	if d := time.Since(begin); d > time.Second {
		t.Errorf("New took %v: it must not wait for servers", d)
	}
	for _, s := range h.Servers() {
		if s.Status != StatusIdle {
			t.Errorf("%s is %s before any request", s.ID, s.Status)
		}
	}
	// A plain name spells its server: calling it starts that one only.
	res, err := h.CallTool(context.Background(), "alpha_one_echo", map[string]any{"a": 1})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	for _, s := range h.Servers() {
		if want := map[bool]mcprun.Status{true: mcprun.StatusReady, false: StatusIdle}[s.ID == "alpha/one"]; s.Status != want {
			t.Errorf("%s is %s, want %s", s.ID, s.Status, want)
		}
	}
	// A hashed name (beta.tools has a dot) is found by listing.
	name := ToolName("beta.tools", "under_score", "echo")
	if res, err := h.CallTool(context.Background(), name, nil); err != nil || res.IsError {
		t.Fatalf("%s: %v %+v", name, err, res)
	}
	// Eager start is one call away.
	for _, s := range h.Start(context.Background()) {
		if s.Status != mcprun.StatusReady {
			t.Errorf("after Start: %s is %s (%s)", s.ID, s.Status, s.Reason)
		}
	}
}

func TestToolNamesStableAcrossInstalls(t *testing.T) {
	alpha, beta, _ := twoPlugins(t)
	h := newHost(t, []Plugin{alpha}, Options{})
	before, err := h.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Set([]Plugin{alpha, beta}); err != nil {
		t.Fatal(err)
	}
	after, err := h.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range toolNames(before) {
		if !slices.Contains(toolNames(after), n) {
			t.Errorf("installing beta.tools renamed or hid %s", n)
		}
	}
	if len(after) <= len(before) {
		t.Errorf("beta.tools' tools are missing: %q", toolNames(after))
	}
}

// TestServerKilledIsReportedAndRestarted: a server
// that dies is reported (status, log, LastExit) and started again on the
// next call, with backoff when it keeps dying.
func TestServerKilledIsReportedAndRestarted(t *testing.T) {
	alpha := loadPlugin(t, writePlugin(t, pluginSpec{name: "alpha", servers: `{"one": {"type": "stdio", "command": "./bin/server"}}`}))
	var log syncbuf.Buffer
	h := newHost(t, []Plugin{alpha}, Options{Logger: logger(&log), MinBackoff: 400 * time.Millisecond, MaxBackoff: 2 * time.Second})
	var first serverInfo
	callJSON(t, h, "alpha_one_info", nil, &first)

	kill(t, first.PID)
	waitFor(t, "the exit to be reported", func() bool { return statusOf(t, h, "alpha/one").Status == mcprun.StatusExited })
	st := statusOf(t, h, "alpha/one")
	if !strings.Contains(st.Reason, "killed") || !strings.Contains(st.LastExit, "killed") || !errors.Is(st.Err, mcprun.ErrExited) {
		t.Errorf("exit reported as %+v", st)
	}
	if !strings.Contains(log.String(), "server exited") {
		t.Errorf("the exit was not logged:\n%s", log.String())
	}

	// The next call restarts it at once.
	var second serverInfo
	callJSON(t, h, "alpha_one_info", nil, &second)
	if second.PID == first.PID {
		t.Fatal("the same process answered after being killed")
	}
	if st := statusOf(t, h, "alpha/one"); st.Status != mcprun.StatusReady || st.Restarts != 1 || !strings.Contains(st.LastExit, "killed") {
		t.Errorf("after restart: %+v", st)
	}

	// Dying again at once: the next start waits MinBackoff.
	kill(t, second.PID)
	waitFor(t, "the second exit", func() bool { return statusOf(t, h, "alpha/one").Status == mcprun.StatusExited })
	_, err := h.CallTool(context.Background(), "alpha_one_info", nil)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "next start attempt") {
		t.Errorf("call during backoff: %v, want ErrUnavailable with the wait", err)
	}
	if st := statusOf(t, h, "alpha/one"); st.RetryAt.IsZero() {
		t.Errorf("RetryAt not reported during backoff: %+v", st)
	}
	waitFor(t, "the backoff to pass", func() bool { return statusOf(t, h, "alpha/one").RetryAt.IsZero() })
	var third serverInfo
	callJSON(t, h, "alpha_one_info", nil, &third)
	if third.PID == second.PID || statusOf(t, h, "alpha/one").Restarts != 2 {
		t.Errorf("not restarted after the backoff: %+v", statusOf(t, h, "alpha/one"))
	}
}

func TestFailingServerBacksOff(t *testing.T) {
	p := loadPlugin(t, writePlugin(t, pluginSpec{name: "p", servers: `{"bad": {"type": "stdio", "command": "./bin/server", "env": {"TESTSERVER_CRASH": "no config"}}}`}))
	h := newHost(t, []Plugin{p}, Options{MinBackoff: time.Hour})
	for i, want := range []string{"exit status 3", "next start attempt"} {
		_, err := h.CallTool(context.Background(), "p_bad_info", nil)
		if !errors.Is(err, ErrUnavailable) && !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), want) {
			t.Errorf("call %d: %v, want %q", i, err, want)
		}
	}
	st := statusOf(t, h, "p/bad")
	if st.Status != mcprun.StatusFailed || !strings.Contains(st.Stderr, "no config") {
		t.Errorf("status %+v", st)
	}
}

// TestEveryRequestHasATimeout: a call, a
// server that never answers tools/list after a normal handshake, and one
// that always has another page are all cut off, in bounded time.
func TestEveryRequestHasATimeout(t *testing.T) {
	p := loadPlugin(t, writePlugin(t, pluginSpec{name: "p", servers: `{
		"ok":      {"type": "stdio", "command": "./bin/server"},
		"hang":    {"type": "stdio", "command": "./bin/server", "env": {"TESTSERVER_LIST": "hang"}},
		"endless": {"type": "stdio", "command": "./bin/server", "env": {"TESTSERVER_LIST": "endless"}}}`}))
	// The short timeout is for the hanging requests; the endless list gets
	// the default, so that a loaded machine cannot make it time out first.
	h := newHost(t, []Plugin{p}, Options{CallTimeout: time.Second})
	endless := newHost(t, []Plugin{p}, Options{Limits: Limits{MaxPages: 20}})
	ctx := context.Background()

	begin := time.Now()
	_, err := h.CallTool(ctx, "p_ok_sleep", map[string]any{"ms": 20000})
	if !errors.Is(err, mcprun.ErrTimeout) {
		t.Errorf("slow call: %v, want mcprun.ErrTimeout", err)
	}
	_, err = h.ServerTools(ctx, "p/hang")
	if !errors.Is(err, mcprun.ErrTimeout) || !strings.Contains(err.Error(), "tools/list") {
		t.Errorf("hanging tools/list: %v, want mcprun.ErrTimeout", err)
	}
	_, err = endless.ServerTools(ctx, "p/endless")
	if !errors.Is(err, ErrListLimit) {
		t.Errorf("endless tools/list: %v, want ErrListLimit", err)
	}
	if d := time.Since(begin); d > 15*time.Second {
		t.Errorf("took %v", d)
	}
	// The other server's tools are still listed, and the ok server still
	// answers after its call timed out.
	tools, err := h.Tools(ctx)
	if err != nil || !slices.Contains(toolNames(tools), "p_ok_echo") || slices.ContainsFunc(tools, func(t Tool) bool { return t.ServerID != "p/ok" }) {
		t.Errorf("Tools: %v %q", err, toolNames(tools))
	}
	h2 := newHost(t, []Plugin{p}, Options{Limits: Limits{MaxItems: 5}})
	if _, err := h2.ServerTools(ctx, "p/ok"); !errors.Is(err, ErrListLimit) {
		t.Errorf("6 tools with MaxItems 5: %v, want ErrListLimit", err)
	}
}

func TestForwardedPromptsAndResources(t *testing.T) {
	p := loadPlugin(t, writePlugin(t, pluginSpec{name: "p", servers: `{"s": {"type": "stdio", "command": "./bin/server"}}`}))
	h := newHost(t, []Plugin{p}, Options{})
	ctx := context.Background()

	prompts, err := h.Prompts(ctx)
	if err != nil || len(prompts) != 1 || prompts[0].Name != "p_s_greet" {
		t.Fatalf("Prompts: %v %+v", err, prompts)
	}
	res, err := h.GetPrompt(ctx, "p_s_greet", map[string]string{"name": "Ada"})
	if err != nil || len(res.Messages) != 1 || res.Messages[0].Content.(*mcp.TextContent).Text != "hello Ada" {
		t.Fatalf("GetPrompt: %v %+v", err, res)
	}

	resources, err := h.Resources(ctx)
	if err != nil || len(resources) != 1 || resources[0].URI != "plugin://p/s/test://static" {
		t.Fatalf("Resources: %v %+v", err, resources)
	}
	templates, err := h.ResourceTemplates(ctx)
	if err != nil || len(templates) != 1 || templates[0].URITemplate != "plugin://p/s/test://echo/{value}" {
		t.Fatalf("ResourceTemplates: %v %+v", err, templates)
	}
	for uri, want := range map[string]string{"plugin://p/s/test://static": "static content", "plugin://p/s/test://echo/abc": "echo abc"} {
		r, err := h.ReadServerResource(ctx, uri)
		if err != nil || len(r.Contents) != 1 || r.Contents[0].Text != want || r.Contents[0].URI != uri {
			t.Errorf("read %s: %v %+v", uri, err, r)
		}
	}
	for _, bad := range []string{"test://static", "plugin://p", "plugin://nosuch/s/x", "plugin://p/nosuch/x"} {
		if _, err := h.ReadServerResource(ctx, bad); !errors.Is(err, ErrNotFound) {
			t.Errorf("read %s: %v, want ErrNotFound", bad, err)
		}
	}
}

func TestSetAddsUpdatesAndRemoves(t *testing.T) {
	alpha, beta, _ := twoPlugins(t)
	alpha.Identity, beta.Identity = "a1", "b1"
	var mu sync.Mutex
	var changes []Change
	h := newHost(t, []Plugin{alpha}, Options{OnChange: func(c Change) {
		mu.Lock()
		changes = append(changes, c)
		mu.Unlock()
	}})
	var a1 serverInfo
	callJSON(t, h, "alpha_one_info", nil, &a1)

	// Unchanged identity: the running server is kept.
	ch, err := h.Set([]Plugin{alpha, beta})
	if err != nil || !slices.Equal(ch.Added, []string{"beta.tools"}) || len(ch.Updated)+len(ch.Removed) != 0 || !ch.Tools {
		t.Fatalf("Set: %v %+v", err, ch)
	}
	var again serverInfo
	callJSON(t, h, "alpha_one_info", nil, &again)
	if again.PID != a1.PID {
		t.Error("an unchanged plugin's server was restarted")
	}

	// New identity: restarted. Removed: its processes end.
	alpha.Identity = "a2"
	var b serverInfo
	callJSON(t, h, ToolName("beta.tools", "one", "info"), nil, &b)
	ch, err = h.Set([]Plugin{alpha})
	if err != nil || !slices.Equal(ch.Updated, []string{"alpha"}) || !slices.Equal(ch.Removed, []string{"beta.tools"}) {
		t.Fatalf("Set: %v %+v", err, ch)
	}
	waitFor(t, "the old processes to end", func() bool { return !alive(a1.PID) && !alive(b.PID) })
	var a2 serverInfo
	callJSON(t, h, "alpha_one_info", nil, &a2)
	if _, err := h.CallTool(context.Background(), ToolName("beta.tools", "one", "info"), nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("removed plugin's tool: %v, want ErrNotFound", err)
	}

	// Two plugins with one name: refused, nothing changes.
	if _, err := h.Set([]Plugin{alpha, alpha}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate names: %v, want ErrDuplicate", err)
	}
	if _, err := New([]Plugin{beta, beta}, Options{}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("New with duplicate names: %v, want ErrDuplicate", err)
	}
	var a3 serverInfo
	callJSON(t, h, "alpha_one_info", nil, &a3)
	if a3.PID != a2.PID {
		t.Error("a refused Set changed the host")
	}
	waitFor(t, "OnChange", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(changes) == 2
	})
}

// TestPluginDataPolicy: without a data directory only the plugin's stdio
// servers are skipped; its remote servers and skills still work.
func TestPluginDataPolicy(t *testing.T) {
	remote := newRemote(t)
	p := loadPlugin(t, writePlugin(t, pluginSpec{name: "p", skills: map[string]string{"guide": "Read me."}, servers: `{
		"local": {"type": "stdio", "command": "./bin/server"},
		"web":   {"type": "streamable-http", "url": "` + remote.URL + `"}}`}))
	p.DataDir = ""
	h := newHost(t, []Plugin{p}, Options{})
	tools, err := h.Tools(context.Background())
	if err != nil || !slices.Equal(toolNames(tools), []string{"p_web_ping"}) {
		t.Errorf("Tools: %v %q, want only the remote server's", err, toolNames(tools))
	}
	if st := statusOf(t, h, "p/local"); st.Status != mcprun.StatusSkipped || !errors.Is(st.Err, mcprun.ErrNoDataDir) {
		t.Errorf("stdio server: %+v, want skipped for ErrNoDataDir", st)
	}
	if len(h.Skills()) != 1 {
		t.Errorf("skills: %+v", h.Skills())
	}
}

func TestCloseEndsEveryProcess(t *testing.T) {
	alpha, beta, _ := twoPlugins(t)
	h, err := New([]Plugin{alpha, beta}, Options{Launch: mcprun.StartOptions{ShutdownTimeout: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	var pids []int
	for _, name := range []string{"alpha_one_spawn", "alpha_two_spawn", ToolName("beta.tools", "one", "spawn")} {
		var out struct{ PID int }
		callJSON(t, h, name, map[string]any{"setsid": true}, &out)
		pids = append(pids, out.PID)
		callJSON(t, h, name, nil, &out)
		pids = append(pids, out.PID)
	}
	for _, s := range h.Servers() {
		if s.Status == mcprun.StatusReady && s.Type == "stdio" {
			var info serverInfo
			callJSON(t, h, ToolName(s.Plugin, s.Name, "info"), nil, &info)
			pids = append(pids, info.PID)
		}
	}
	if err := h.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	waitFor(t, "every process to end", func() bool { return !slices.ContainsFunc(pids, alive) })
	if _, err := h.Tools(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Tools after Close: %v, want ErrClosed", err)
	}
}

func TestAdhocDataDir(t *testing.T) {
	home := t.TempDir()
	a, b := t.TempDir(), t.TempDir()
	da, err := AdhocDataDir(home, "demo", a)
	if err != nil {
		t.Fatal(err)
	}
	db, _ := AdhocDataDir(home, "demo", b)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	dl, _ := AdhocDataDir(home, "demo", link)
	if da == db || da != dl || filepath.Dir(da) != filepath.Join(home, "adhoc") || !regexp.MustCompile(`/demo-[0-9a-f]{12}$`).MatchString(da) {
		t.Errorf("a %s, b %s, link to a %s", da, db, dl)
	}
	for _, bad := range []string{"", ".", "..", "a/b"} {
		if _, err := AdhocDataDir(home, bad, a); !errors.Is(err, ErrDataDir) {
			t.Errorf("name %q: %v, want ErrDataDir", bad, err)
		}
	}
	if d, _ := AdhocDataDir(home, "demo", "oci://example.com/demo:1"); filepath.Dir(d) != filepath.Join(home, "adhoc") || d == da {
		t.Errorf("an artifact's data directory: %s", d)
	}

}

// kill ends a process at once (SIGKILL on Unix).
func kill(t *testing.T, pid int) {
	p, err := os.FindProcess(pid)
	if err == nil {
		err = p.Kill()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestLaunchFieldsOfTheHostRefused: a Launch template that sets what the
// host sets per server is refused, naming the field, instead of being
// overridden unseen.
func TestLaunchFieldsOfTheHostRefused(t *testing.T) {
	for name, l := range map[string]mcprun.StartOptions{
		"Root":        {PlanOptions: mcprun.PlanOptions{Root: "/x"}},
		"DataDir":     {PlanOptions: mcprun.PlanOptions{DataDir: "/x"}},
		"HostHeaders": {PlanOptions: mcprun.PlanOptions{HostHeaders: map[string]http.Header{}}},
		"HostEnv":     {PlanOptions: mcprun.PlanOptions{HostEnv: map[string]map[string]string{}}},
		"Client":      {Client: mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)},
	} {
		_, err := New(nil, Options{Launch: l})
		if !errors.Is(err, ErrLaunchField) || !strings.Contains(err.Error(), name) {
			t.Errorf("Launch.%s set: %v", name, err)
		}
	}
	h, err := New(nil, Options{Launch: mcprun.StartOptions{Subreaper: false, StderrTail: 10}})
	if err != nil {
		t.Fatalf("a template of the caller's fields: %v", err)
	}
	h.Close()
}
