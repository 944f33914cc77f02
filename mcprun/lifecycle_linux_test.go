package mcprun

import (
	"syscall"
	"testing"
)

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
