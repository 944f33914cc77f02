package mcprun

import (
	"os/exec"
	"sync"
)

// The servers this process has started and not yet reaped. With the
// subreaper option, every other child of this process is an orphan some
// server left behind; the lock keeps a server that is being started from
// being taken for one.
var tracked = struct {
	sync.RWMutex
	pids map[int]bool
}{pids: map[int]bool{}}

// startTracked starts cmd and records its pid as a server's.
func startTracked(cmd *exec.Cmd) error {
	tracked.RLock()
	defer tracked.RUnlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	trackedAdd(cmd.Process.Pid)
	return nil
}

var trackedMu sync.Mutex // guards tracked.pids among starters holding the read lock

func trackedAdd(pid int) {
	trackedMu.Lock()
	tracked.pids[pid] = true
	trackedMu.Unlock()
}

// untrack forgets a server once it has been reaped.
func untrack(pid int) {
	trackedMu.Lock()
	delete(tracked.pids, pid)
	trackedMu.Unlock()
}

// isTracked reports whether pid is a live server started here.
func isTracked(pid int) bool {
	trackedMu.Lock()
	defer trackedMu.Unlock()
	return tracked.pids[pid]
}

// sweepOrphans ends every child of this process that is not a server it
// started: with the subreaper option on, those are the orphans of servers
// (daemons they double-forked, children of servers that died), reparented
// here instead of to init. It holds the write lock so that no server is
// half-started meanwhile.
func sweepOrphans() {
	tracked.Lock()
	defer tracked.Unlock()
	killOrphans(isTracked)
}
