package mcprun

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/plugkit/plugkit/agentplugin"
)

// waitDead waits (boundedly: a signal is delivered asynchronously) until
// none of pids is alive, and reports those still alive.
func waitDead(t *testing.T, what map[string]int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for name, pid := range what {
		if pid == 0 {
			continue
		}
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL) // do not leak it past the test
			t.Errorf("%s (pid %d) survived", name, pid)
		}
	}
}

// TestCloseEndsEveryDescendant: a server's setsid
// child leaves its process group, so killing the group misses it. Close
// ends every descendant of the server, wherever its group and session.
func TestCloseEndsEveryDescendant(t *testing.T) {
	root := newRoot(t)
	installServer(t, root, "bin/server")
	opts := StartOptions{PlanOptions: baseOptions(t, root), ShutdownTimeout: 300 * time.Millisecond}
	rt, err := Start(context.Background(), &agentplugin.Package{Name: "p", Servers: []agentplugin.Server{stdioServer("p", "s")}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	var child, escaped struct{ PID int }
	callTool(t, rt, "p/s", "spawn", nil, &child)
	callTool(t, rt, "p/s", "spawn", map[string]any{"setsid": true}, &escaped)
	if err := rt.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	waitDead(t, map[string]int{"child in the group": child.PID, "setsid child": escaped.PID})
}

// TestPlugkitTerminatedLeavesNoProcess: SIGTERM to the host program closes
// the runtime, and nothing the server started survives.
func TestPlugkitTerminatedLeavesNoProcess(t *testing.T) {
	cmd, rep := startHelper(t, "plain")
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	waitDead(t, map[string]int{"server": rep.Server, "setsid child": rep.Setsid})
}

// TestServerDiesWithPlugkit: after SIGKILL of the host program, which
// cannot clean up, the kernel ends the server (its parent-death signal).
func TestServerDiesWithPlugkit(t *testing.T) {
	cmd, rep := startHelper(t, "plain")
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	waitDead(t, map[string]int{"server": rep.Server})
	// The setsid child is out of the kernel's reach once its ancestors
	// are gone (docs/runtime.md says so); end it here.
	syscall.Kill(rep.Setsid, syscall.SIGKILL)
}

// TestSubreaperEndsOrphans: a server that double-forks a daemon orphans
// it at once; with StartOptions.Subreaper the orphan is reparented to the
// host instead of init, and Close ends it too.
func TestSubreaperEndsOrphans(t *testing.T) {
	cmd, rep := startHelper(t, "subreaper")
	if ppid := parentOf(rep.Orphan); ppid != cmd.Process.Pid {
		t.Errorf("the orphan's parent is %d, want the subreaper %d", ppid, cmd.Process.Pid)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	waitDead(t, map[string]int{"server": rep.Server, "setsid child": rep.Setsid, "orphan": rep.Orphan})
}

// parentOf returns the parent pid of pid, 0 when it is gone.
func parentOf(pid int) int {
	st, _ := readStat(pid)
	return st.ppid
}

// TestDescendantsBothWays: the walk through the kernel's children files
// and the scan of all of /proc (the fallback for kernels without them)
// find the same tree.
func TestDescendantsBothWays(t *testing.T) {
	root := newRoot(t)
	installServer(t, root, "bin/server")
	rt := startPlugin(t, &agentplugin.Package{Name: "p", Servers: []agentplugin.Server{stdioServer("p", "s")}},
		StartOptions{PlanOptions: baseOptions(t, root), ShutdownTimeout: 200 * time.Millisecond})
	var a, b struct{ PID int }
	callTool(t, rt, "p/s", "spawn", nil, &a)
	callTool(t, rt, "p/s", "spawn", map[string]any{"setsid": true}, &b)
	server := rt.conns[0].proc.pid()
	pids := func(ps []procStat) map[int]bool {
		m := map[int]bool{}
		for _, p := range ps {
			m[p.pid] = true
		}
		return m
	}
	walked, scanned := pids(descendantsOf(server)), pids(descendants(allProcs(), server))
	if !walked[a.PID] || !walked[b.PID] || len(walked) != len(scanned) {
		t.Errorf("walked %v, scanned %v, want both children %d and %d", walked, scanned, a.PID, b.PID)
	}
	for pid := range walked {
		if !scanned[pid] {
			t.Errorf("%d found by the walk only", pid)
		}
	}
}
