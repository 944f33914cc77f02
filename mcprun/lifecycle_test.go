package mcprun

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/plugkit/plugkit/agentplugin"
)

// helperEnv names the environment variable that turns the test binary into
// a small host program (see runHelper), so that tests can kill a whole
// "plugkit" process and look at what survives it.
const helperEnv = "MCPRUN_TEST_HELPER"

// helperReport is what the helper prints once its server is running.
type helperReport struct {
	Server int `json:"server"`
	Setsid int `json:"setsid"`
	Orphan int `json:"orphan"`
}

// runHelper is the helper program: it starts one stdio test server from
// the root in MCPRUN_TEST_ROOT, makes it start a setsid child (and, with
// MCPRUN_TEST_HELPER=subreaper, an orphaned grandchild), prints the pids as
// JSON, and closes everything on SIGTERM or SIGINT, as plugkit does.
func runHelper(mode string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	root := os.Getenv("MCPRUN_TEST_ROOT")
	opts := StartOptions{PlanOptions: PlanOptions{Root: root, DataDir: filepath.Join(root, "data"), BaseEnv: []string{}},
		ShutdownTimeout: 300 * time.Millisecond}
	opts.Subreaper = mode == "subreaper"
	srv := stdioServer("p", "s")
	srv.Env = map[string]string{"TESTSERVER_IGNORE_EOF": "1"}
	pkg := &agentplugin.Package{Name: "p", Servers: []agentplugin.Server{srv}}
	rt, err := Start(context.Background(), pkg, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer rt.Close()
	sess := rt.Session("p/s")
	if sess == nil {
		fmt.Fprintln(os.Stderr, rt.Servers()[0].Reason)
		return 1
	}
	var rep helperReport
	var in struct{ PID int }
	for _, step := range []struct {
		tool string
		args map[string]any
		pid  *int
	}{
		{"info", nil, &rep.Server},
		{"spawn", map[string]any{"setsid": true}, &rep.Setsid},
		{"spawn", map[string]any{"orphan": true}, &rep.Orphan},
	} {
		if step.pid == &rep.Orphan && mode != "subreaper" {
			continue
		}
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: step.tool, Arguments: step.args})
		if err != nil || res.IsError {
			fmt.Fprintln(os.Stderr, step.tool, err)
			return 1
		}
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &in)
		*step.pid = in.PID
	}
	json.NewEncoder(os.Stdout).Encode(rep)
	<-ctx.Done()
	return 0
}

// startHelper runs the helper program and returns it with its report.
func startHelper(t *testing.T, mode string) (*exec.Cmd, helperReport) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the kernel's parent-death signal and child subreapers exist on Linux only")
	}
	root := newRoot(t)
	installServer(t, root, "bin/server")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "MCPRUN_TEST_ROOT="+root, "MCPRUN_TEST_SERVER="+serverBin(t))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadBytes('\n')
	var rep helperReport
	if err != nil || json.Unmarshal(line, &rep) != nil || rep.Server == 0 {
		t.Fatalf("helper said %q (%v)", line, err)
	}
	return cmd, rep
}
