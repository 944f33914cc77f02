package mcprun

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
)

func planOK(t *testing.T, name string, srv agentplugin.Server, opts PlanOptions) *LaunchPlan {
	t.Helper()
	p, err := Plan(&agentplugin.Package{Name: name}, srv, opts)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	return p
}

func planErr(t *testing.T, srv agentplugin.Server, opts PlanOptions, want error) {
	t.Helper()
	_, err := Plan(&agentplugin.Package{Name: "p"}, srv, opts)
	if !errors.Is(err, want) {
		t.Fatalf("Plan error = %v, want %v", err, want)
	}
}

func TestSpec92_SingleNonRecursiveExpansion(t *testing.T) {
	// The root's own path contains the other placeholder, and the data
	// directory's path contains this one: a second pass would change them.
	root := filepath.Join(t.TempDir(), "r${PLUGIN_DATA}x")
	mustMkdir(t, root)
	installServer(t, root, "bin/server")
	opts := PlanOptions{Root: root, DataDir: filepath.Join(t.TempDir(), "d${PLUGIN_ROOT}y"), BaseEnv: []string{}}
	srv := stdioServer("p", "s")
	srv.Args = []string{"${PLUGIN_ROOT}/a", "${PLUGIN_DATA}/b", "${PLUGIN_ROOT}${PLUGIN_DATA}"}
	srv.Env = map[string]string{"R": "${PLUGIN_ROOT}", "D": "${PLUGIN_DATA}"}
	p := planOK(t, "p", srv, opts)

	wantArgs := []string{p.Root + "/a", p.DataDir + "/b", p.Root + p.DataDir}
	if !slices.Equal(p.Args[1:], wantArgs) {
		t.Errorf("args = %q, want %q", p.Args[1:], wantArgs)
	}
	env := envMap(t, p.Env)
	if env["R"] != p.Root || env["D"] != p.DataDir {
		t.Errorf("env R=%q D=%q, want %q and %q", env["R"], env["D"], p.Root, p.DataDir)
	}
}

func TestSpec92_UnrecognizedPlaceholdersStayLiteral(t *testing.T) {
	root := newRoot(t)
	installServer(t, root, "bin/server")
	literal := []string{"$HOME", "${HOME}", "${PLUGIN_ROOT_SUFFIX}", "$PLUGIN_ROOT", "${plugin_root}", "$${PLUGIN_ROOT", "${ PLUGIN_DATA}", "%PLUGIN_ROOT%", "~"}
	srv := stdioServer("p", "s")
	srv.Args = literal
	srv.Env = map[string]string{}
	for i, v := range literal {
		srv.Env[string(rune('A'+i))] = v
	}
	p := planOK(t, "p", srv, baseOptions(t, root))
	if !slices.Equal(p.Args[1:], literal) {
		t.Errorf("args = %q, want them unchanged", p.Args[1:])
	}
	env := envMap(t, p.Env)
	for k, v := range srv.Env {
		if env[k] != v {
			t.Errorf("env %s = %q, want %q", k, env[k], v)
		}
	}
}

func TestSpec92_NoExpansionInCommandEnvKeysURLAndHeaders(t *testing.T) {
	root := newRoot(t)
	// A command naming the placeholder is looked up literally.
	installServer(t, root, "${PLUGIN_ROOT}")
	srv := agentplugin.Server{ID: "p/s", Name: "s", Type: agentplugin.Stdio, Command: "./${PLUGIN_ROOT}",
		Env: map[string]string{"K${PLUGIN_ROOT}": "v"}}
	p := planOK(t, "p", srv, baseOptions(t, root))
	if p.Path != filepath.Join(root, "${PLUGIN_ROOT}") {
		t.Errorf("path = %q, want the literal file name", p.Path)
	}
	if _, ok := envMap(t, p.Env)["K${PLUGIN_ROOT}"]; !ok {
		t.Errorf("env key was expanded: %q", p.Env)
	}

	h := agentplugin.Server{ID: "p/h", Name: "h", Type: agentplugin.StreamableHTTP,
		URL:     "http://127.0.0.1:1/${PLUGIN_ROOT}/mcp",
		Headers: map[string]string{"X-Root": "${PLUGIN_ROOT}", "X-Data": "$PLUGIN_DATA"}}
	hp := planOK(t, "p", h, baseOptions(t, root))
	if hp.URL != h.URL || hp.Header.Get("X-Root") != "${PLUGIN_ROOT}" || hp.Header.Get("X-Data") != "$PLUGIN_DATA" {
		t.Errorf("URL %q headers %v, want them literal", hp.URL, hp.Header)
	}
}

func TestSpec721_ArgsPassedAsGiven(t *testing.T) {
	root := newRoot(t)
	installServer(t, root, "bin/server")
	srv := stdioServer("p", "s")
	srv.Args = []string{"two words", "", "  ", "a;b", "'q'", `"dq"`, "*", "$(id)", "`id`", "|", ""}
	p := planOK(t, "p", srv, baseOptions(t, root))
	if !slices.Equal(p.Args[1:], srv.Args) {
		t.Errorf("args = %q, want %q", p.Args[1:], srv.Args)
	}
	if len(p.Args) != len(srv.Args)+1 {
		t.Errorf("argv has %d entries, want %d", len(p.Args), len(srv.Args)+1)
	}
}

func TestSpec721_CommandPathWithSpace(t *testing.T) {
	root := newRoot(t)
	installServer(t, root, "my bin/the server")
	srv := stdioServer("p", "s")
	srv.Command = "./my bin/the server"
	p := planOK(t, "p", srv, baseOptions(t, root))
	if p.Path != filepath.Join(root, "my bin", "the server") || p.Args[0] != p.Path {
		t.Errorf("path %q argv0 %q, want one token", p.Path, p.Args[0])
	}
}

func TestSpec721_CommandForms(t *testing.T) {
	root := newRoot(t)
	installServer(t, root, "bin/server")
	mustWrite(t, filepath.Join(root, "bin/data.txt"), "not a program", 0o644)
	mustMkdir(t, filepath.Join(root, "bin/dir"))
	outside := filepath.Join(t.TempDir(), "evil")
	mustWrite(t, outside, "#!/bin/sh\n", 0o755)
	mustSymlink(t, outside, filepath.Join(root, "bin/link-out"))
	mustSymlink(t, "server", filepath.Join(root, "bin/link-in"))

	for _, tc := range []struct {
		command string
		want    error
	}{
		{"./bin/data.txt", ErrNotExecutable},
		{"./bin/dir", ErrNotExecutable},
		{"./bin/missing", ErrNotExecutable},
		{"./bin/link-out", ErrEscape},
		{"./../plugin/bin/server", nil}, // resolves back inside the root
		{"./bin/../../x", ErrNotExecutable},
		{"bin/server", ErrInvalidCommand},
		{"../bin/server", ErrInvalidCommand},
		{"/bin/sh", ErrInvalidCommand},
		{"./", ErrInvalidCommand},
		{"", ErrInvalidCommand},
		{"server --flag", ErrNotFound},
	} {
		srv := stdioServer("p", "s")
		srv.Command = tc.command
		_, err := Plan(&agentplugin.Package{Name: "p"}, srv, baseOptions(t, root))
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("command %q: error %v, want %v", tc.command, err, tc.want)
		}
	}

	// A link inside the root is fine; argv[0] keeps the name invoked.
	srv := stdioServer("p", "s")
	srv.Command = "./bin/link-in"
	p := planOK(t, "p", srv, baseOptions(t, root))
	if p.Path != filepath.Join(root, "bin/server") || p.Args[0] != filepath.Join(root, "bin/link-in") {
		t.Errorf("path %q argv0 %q", p.Path, p.Args[0])
	}
}

func TestSpec721_BareCommandUsesClientSearchPath(t *testing.T) {
	root := newRoot(t)
	client, configured := t.TempDir(), t.TempDir()
	mustWrite(t, filepath.Join(client, "tool"), "#!/bin/sh\n", 0o755)
	mustWrite(t, filepath.Join(configured, "tool"), "#!/bin/sh\n", 0o755)
	t.Setenv("PATH", client)
	srv := agentplugin.Server{ID: "p/s", Name: "s", Type: agentplugin.Stdio, Command: "tool",
		Env: map[string]string{"PATH": configured}}
	p := planOK(t, "p", srv, baseOptions(t, root))
	if p.Path != filepath.Join(client, "tool") || p.Args[0] != "tool" {
		t.Errorf("path %q argv0 %q, want the client's PATH entry", p.Path, p.Args[0])
	}
	if envMap(t, p.Env)["PATH"] != configured {
		t.Errorf("the configured PATH must still reach the server")
	}
}

func TestSpec91_EnvOverlayOrder(t *testing.T) {
	root := newRoot(t)
	installServer(t, root, "bin/server")
	opts := baseOptions(t, root)
	opts.BaseEnv = []string{"A=base", "B=base", "PLUGIN_ROOT=/evil", "A=base2", "plugin_data=lower", "NOEQUALS"}
	srv := stdioServer("p", "s")
	srv.Env = map[string]string{"A": "configured", "C": "${PLUGIN_DATA}"}
	p := planOK(t, "p", srv, opts)
	env := envMap(t, p.Env)
	want := map[string]string{"A": "configured", "B": "base", "C": p.DataDir, "PLUGIN_ROOT": root,
		"PLUGIN_DATA": p.DataDir, "plugin_data": "lower"}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	if len(env) != len(want) {
		t.Errorf("env = %q, want exactly %v", p.Env, want)
	}
}

func TestInheritEnvPassesNamedVariables(t *testing.T) {
	root := newRoot(t)
	installServer(t, root, "bin/server")
	t.Setenv("MCPRUN_TEST_EXACT", "yes")
	t.Setenv("AWS_PROFILE", "dev")
	t.Setenv("AWS_REGION", "eu")
	t.Setenv("MCPRUN_TEST_OTHER", "no")
	opts := baseOptions(t, root)
	opts.BaseEnv = nil
	opts.InheritEnv = []string{"MCPRUN_TEST_EXACT", "AWS_*"}
	env := envMap(t, planOK(t, "p", stdioServer("p", "s"), opts).Env)
	for k, v := range map[string]string{"MCPRUN_TEST_EXACT": "yes", "AWS_PROFILE": "dev", "AWS_REGION": "eu"} {
		if env[k] != v {
			t.Errorf("%s = %q, want %q inherited", k, env[k], v)
		}
	}
	if _, ok := env["MCPRUN_TEST_OTHER"]; ok {
		t.Error("a variable InheritEnv does not name was inherited")
	}
	opts.InheritEnv = []string{"*"}
	if env := envMap(t, planOK(t, "p", stdioServer("p", "s"), opts).Env); env["MCPRUN_TEST_OTHER"] != "no" {
		t.Error(`InheritEnv ["*"] must inherit everything`)
	}

	if err := CheckInheritEnv([]string{"A", "B_*", "*"}); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"", "A=B", "A*B", "**", "A\x00"} {
		if CheckInheritEnv([]string{bad}) == nil {
			t.Errorf("CheckInheritEnv accepted %q", bad)
		}
	}
}

// TestHostEnvOverlay: the host's env values (credentials) are laid over
// the configured env, are never expanded, and cannot name the reserved
// variables, which is the host's mistake, not an invalid server.
func TestHostEnvOverlay(t *testing.T) {
	root := newRoot(t)
	installServer(t, root, "bin/server")
	opts := baseOptions(t, root)
	opts.HostEnv = map[string]map[string]string{"p/s": {"TOKEN": "${PLUGIN_ROOT}-secret", "A": "host"}}
	srv := stdioServer("p", "s")
	srv.Env = map[string]string{"A": "configured", "B": "configured"}
	env := envMap(t, planOK(t, "p", srv, opts).Env)
	if env["TOKEN"] != "${PLUGIN_ROOT}-secret" || env["A"] != "host" || env["B"] != "configured" {
		t.Errorf("env %v", env)
	}
	opts.HostEnv["p/s"] = map[string]string{"PLUGIN_DATA": "/elsewhere"}
	_, err := Plan(&agentplugin.Package{Name: "p"}, srv, opts)
	if !errors.Is(err, ErrHostConfig) || errors.Is(err, ErrInvalidServer) {
		t.Errorf("host overlay naming PLUGIN_DATA: %v, want ErrHostConfig only", err)
	}
}

func TestSpec92_ReservedEnvNamesMakeServerInvalid(t *testing.T) {
	root := newRoot(t)
	installServer(t, root, "bin/server")
	for _, k := range []string{"PLUGIN_ROOT", "PLUGIN_DATA", "", "A=B"} {
		srv := stdioServer("p", "s")
		srv.Env = map[string]string{k: "x"}
		_, err := Plan(&agentplugin.Package{Name: "p"}, srv, baseOptions(t, root))
		if !errors.Is(err, ErrInvalidEnv) || !errors.Is(err, ErrInvalidServer) {
			t.Errorf("env name %q: error %v, want ErrInvalidEnv", k, err)
		}
	}
}

func TestSpec721_CwdForms(t *testing.T) {
	root := newRoot(t)
	installServer(t, root, "bin/server")
	mustMkdir(t, filepath.Join(root, "sub/deeper"))
	mustSymlink(t, "sub/deeper", filepath.Join(root, "inlink"))
	opts := baseOptions(t, root)
	data := opts.DataDir

	for _, tc := range []struct{ cwd, want string }{
		{"", root},
		{"./", root},
		{"./sub", root + "/sub"},
		{"./sub/deeper/..", root + "/sub"},
		{"./inlink", root + "/sub/deeper"},
		{"./inlink/..", root + "/sub"}, // ".." after the link, as the kernel does
		{"${PLUGIN_ROOT}", root},
		{"${PLUGIN_ROOT}/sub", root + "/sub"},
		{"${PLUGIN_DATA}", data},
		{"${PLUGIN_DATA}/state", data + "/state"}, // planned before it exists
	} {
		srv := stdioServer("p", "s")
		srv.Cwd = tc.cwd
		p := planOK(t, "p", srv, opts)
		if p.Dir != tc.want {
			t.Errorf("cwd %q: dir %q, want %q", tc.cwd, p.Dir, tc.want)
		}
	}

	for _, cwd := range []string{"sub", "/tmp", ".", "../x", "${PLUGIN_ROOT}sub", "$PLUGIN_ROOT/sub",
		"${PLUGIN_DATA}x", "~/x", "${HOME}", " ./sub"} {
		srv := stdioServer("p", "s")
		srv.Cwd = cwd
		planErr(t, srv, opts, ErrInvalidCwd)
	}
}

func TestSpec41_CwdEscapesMakeServerInvalid(t *testing.T) {
	root := newRoot(t)
	installServer(t, root, "bin/server")
	mustMkdir(t, filepath.Join(root, "sub"))
	outside := t.TempDir()
	mustSymlink(t, outside, filepath.Join(root, "out"))
	mustSymlink(t, "../..", filepath.Join(root, "sub/up"))
	opts := baseOptions(t, root)
	data := opts.DataDir
	mustMkdir(t, data)
	mustSymlink(t, root, filepath.Join(data, "to-root"))

	for _, cwd := range []string{
		"./..", "./sub/../..", "./out", "./out/x", "./sub/up", "./sub/up/plugin/..",
		"${PLUGIN_ROOT}/..", "${PLUGIN_ROOT}/out",
		"${PLUGIN_DATA}/..", "${PLUGIN_DATA}/to-root", "${PLUGIN_DATA}/missing/..",
	} {
		srv := stdioServer("p", "s")
		srv.Cwd = cwd
		_, err := Plan(&agentplugin.Package{Name: "p"}, srv, opts)
		if !errors.Is(err, ErrEscape) || !errors.Is(err, ErrInvalidServer) {
			t.Errorf("cwd %q: error %v, want ErrEscape", cwd, err)
		}
	}
}

func TestSpec91_DataDirCreatedPrivateByPrepare(t *testing.T) {
	root := newRoot(t)
	installServer(t, root, "bin/server")
	opts := baseOptions(t, root)
	a := planOK(t, "alpha", stdioServer("alpha", "s"), opts)
	if _, err := os.Stat(a.DataDir); !os.IsNotExist(err) {
		t.Fatalf("Plan must not create PLUGIN_DATA (stat: %v)", err)
	}
	if err := a.Prepare(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(a.DataDir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("PLUGIN_DATA after Prepare: %v %v, want a 0700 directory", fi, err)
	}
}

// TestPlanRemoteNeedsNoDataDir: a data
// directory is required for stdio servers only. Without one (and with no
// HOME to derive one from), remote servers still plan and stdio servers
// are refused with ErrNoDataDir, which Start reports as skipped.
func TestPlanRemoteNeedsNoDataDir(t *testing.T) {
	t.Setenv("HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	root := newRoot(t)
	installServer(t, root, "bin/server")
	opts := PlanOptions{Root: root, BaseEnv: []string{}}
	for _, typ := range []agentplugin.Transport{agentplugin.StreamableHTTP, agentplugin.SSE} {
		srv := agentplugin.Server{ID: "p/r", Name: "r", Type: typ, URL: "http://127.0.0.1:1/mcp"}
		if p := planOK(t, "p", srv, opts); p.DataDir != "" || p.URL != srv.URL {
			t.Errorf("%s: plan %+v", typ, p)
		}
	}
	if _, err := Plan(&agentplugin.Package{Name: "p"}, stdioServer("p", "s"), opts); !errors.Is(err, ErrNoDataDir) {
		t.Errorf("stdio without a data directory: %v, want ErrNoDataDir", err)
	}
	rt := startPlugin(t, &agentplugin.Package{Name: "p", Servers: []agentplugin.Server{stdioServer("p", "s")}},
		StartOptions{PlanOptions: opts})
	if s := status(t, rt, "p/s"); s.Status != StatusSkipped || !errors.Is(s.Err, ErrNoDataDir) {
		t.Errorf("stdio server: %s (%v), want skipped with ErrNoDataDir", s.Status, s.Err)
	}
}

func TestSpec41_PrepareChecksTheFilesystemAgain(t *testing.T) {
	root := newRoot(t)
	installServer(t, root, "bin/server")
	mustMkdir(t, filepath.Join(root, "work"))
	srv := stdioServer("p", "s")
	srv.Cwd = "./work"
	p := planOK(t, "p", srv, baseOptions(t, root))
	// The directory is swapped for a link leaving the root after planning.
	if err := os.Remove(filepath.Join(root, "work")); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, t.TempDir(), filepath.Join(root, "work"))
	if err := p.Prepare(); !errors.Is(err, ErrEscape) {
		t.Fatalf("Prepare error = %v, want ErrEscape", err)
	}
}

func TestSpec721_RemoteURLRules(t *testing.T) {
	root := newRoot(t)
	for _, tc := range []struct {
		url  string
		want error
	}{
		{"https://example.com/mcp", nil},
		{"http://localhost:8080/mcp", nil},
		{"http://127.0.0.1/mcp", nil},
		{"http://127.9.9.9/mcp", nil},
		{"http://[::1]:9/mcp", nil},
		{"http://example.com/mcp", ErrInsecureURL},
		{"http://localhost.example.com/mcp", ErrInsecureURL},
		{"http://10.0.0.1/mcp", ErrInsecureURL},
		{"https://user:pw@example.com/mcp", ErrInvalidURL},
		{"https://example.com/mcp#frag", ErrInvalidURL},
		{"ftp://example.com/mcp", ErrInvalidURL},
		{"/relative", ErrInvalidURL},
	} {
		srv := agentplugin.Server{ID: "p/h", Name: "h", Type: agentplugin.StreamableHTTP, URL: tc.url}
		p, err := Plan(&agentplugin.Package{Name: "p"}, srv, baseOptions(t, root))
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.url, err, tc.want)
		}
		if err == nil && (p.URL != tc.url || p.Client == nil || p.Client.Jar != nil) {
			t.Errorf("%s: plan %+v, want the URL as written and a client without cookie jar", tc.url, p)
		}
	}
}

func TestSpec721_HostHeadersReplaceConfiguredCaseInsensitively(t *testing.T) {
	root := newRoot(t)
	srv := agentplugin.Server{ID: "p/h", Name: "h", Type: agentplugin.SSE, URL: "https://example.com/sse",
		Headers: map[string]string{"x-tenant": "public", "authorization": "configured", "X-Keep": "kept"}}
	opts := baseOptions(t, root)
	opts.HostHeaders = map[string]http.Header{"p/h": {"AUTHORIZATION": {"Bearer host"}}}
	p := planOK(t, "p", srv, opts)
	want := http.Header{"X-Tenant": {"public"}, "Authorization": {"Bearer host"}, "X-Keep": {"kept"}}
	if len(p.Header) != len(want) {
		t.Fatalf("header = %v, want %v", p.Header, want)
	}
	for k := range want {
		if !slices.Equal(p.Header[k], want[k]) {
			t.Errorf("%s = %q, want %q", k, p.Header[k], want[k])
		}
	}

	for _, bad := range []map[string]string{
		{"X-A": "1", "x-a": "2"},
		{"Bad Name": "v"},
		{"X-A": "line\r\nbreak"},
	} {
		srv.Headers = bad
		planErr(t, srv, baseOptions(t, root), ErrInvalidHeader)
	}
}

func TestSpec722_UnknownTransportIsInvalid(t *testing.T) {
	srv := agentplugin.Server{ID: "p/x", Name: "x", Type: "websocket"}
	planErr(t, srv, baseOptions(t, newRoot(t)), ErrUnsupportedTransport)
}

func TestSpec91_PluginRootIsAbsoluteAndResolved(t *testing.T) {
	root := newRoot(t)
	installServer(t, root, "bin/server")
	link := filepath.Join(t.TempDir(), "current")
	mustSymlink(t, root, link)
	t.Chdir(filepath.Dir(link))
	for _, given := range []string{link, "current", "./current/../current"} {
		opts := baseOptions(t, given)
		p := planOK(t, "p", stdioServer("p", "s"), opts)
		if p.Root != root || envMap(t, p.Env)["PLUGIN_ROOT"] != root || p.Dir != root {
			t.Errorf("root %q: PLUGIN_ROOT %q, dir %q, want %q", given, p.Root, p.Dir, root)
		}
	}
	if _, err := Plan(&agentplugin.Package{Name: "p"}, stdioServer("p", "s"), baseOptions(t, "")); err == nil {
		t.Error("an empty root must be refused")
	}
}
