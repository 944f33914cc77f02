//go:build linux

package mcprun

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// setProcAttr puts the server in a new process group whose id is its pid,
// so that killing the group reaches every child it forks, and asks the
// kernel to SIGKILL it when its parent dies, so that a plugkit killed
// without a chance to clean up (SIGKILL, a crash) does not leave it running.
//
// The parent-death signal follows the OS thread that started the server:
// Go keeps threads alive, except one locked with runtime.LockOSThread whose
// goroutine exits, so a host must not start servers from such a goroutine.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalGroup sends sig to every process in the group led by pid.
func signalGroup(pid int, sig syscall.Signal) {
	syscall.Kill(-pid, sig)
}

// enableSubreaper makes this process the child subreaper of its
// descendants: orphans are reparented here, not to init.
func enableSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// procID names one process for as long as it lives: a pid can be reused
// after the process is reaped, a (pid, start time) pair cannot.
type procID struct {
	pid   int
	start uint64
}

// procStat is what plugkit reads of /proc/PID/stat.
type procStat struct {
	procID
	ppid, pgid int
	zombie     bool
}

// readStat reads one process's stat line; false when it is gone.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	// "pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
	// majflt cmajflt utime stime cutime cstime priority nice threads
	// itrealvalue starttime ...": comm may hold spaces and parentheses, so
	// fields are counted after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return procStat{}, false
	}
	st := procStat{procID: procID{pid: pid}, zombie: f[0] == "Z"}
	st.ppid, _ = strconv.Atoi(f[1])
	st.pgid, _ = strconv.Atoi(f[2])
	st.start, _ = strconv.ParseUint(f[19], 10, 64)
	return st, true
}

// allProcs reads the stat of every process visible in /proc.
func allProcs() []procStat {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]procStat, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok {
			out = append(out, st)
		}
	}
	return out
}

// children lists the children of pid from /proc/PID/task/*/children
// (each thread's children, since any thread may fork); false when this
// kernel does not have those files, and /proc must be scanned instead.
func children(pid int) ([]int, bool) {
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return nil, false
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/children")
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && t.Name() == strconv.Itoa(pid) {
				return nil, false // no CONFIG_PROC_CHILDREN
			}
			continue // the thread ended meanwhile
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out, true
}

// childStats returns the stats of the children of pid, from its children
// files when the kernel has them, else from a scan of /proc.
func childStats(pid int) []procStat {
	kids, ok := children(pid)
	if !ok {
		var out []procStat
		for _, p := range allProcs() {
			if p.ppid == pid {
				out = append(out, p)
			}
		}
		return out
	}
	out := make([]procStat, 0, len(kids))
	for _, k := range kids {
		if st, ok := readStat(k); ok && st.ppid == pid {
			out = append(out, st)
		}
	}
	return out
}

// descendantsOf returns every process below root, walking the children
// files when the kernel has them (cost proportional to the tree), else
// scanning /proc (proportional to every process on the system).
func descendantsOf(root int) []procStat {
	if _, ok := children(root); !ok {
		return descendants(allProcs(), root)
	}
	var out []procStat
	queue := []int{root}
	for len(queue) > 0 {
		kids := childStats(queue[0])
		queue = queue[1:]
		for _, k := range kids {
			out = append(out, k)
			queue = append(queue, k.pid)
		}
	}
	return out
}

// descendants returns every process below root in procs (root excluded).
func descendants(procs []procStat, root int) []procStat {
	children := map[int][]procStat{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p)
	}
	var out []procStat
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
	}
	return out
}

// freezeEscapees stops (SIGSTOP) every descendant of the server pid that
// left its process group, and every descendant of those, and returns them.
// Stopped processes cannot fork, so a few rounds find them all even while
// they multiply; they are killed with the group later (killProcs).
func freezeEscapees(pid int) []procID {
	seen := map[procID]bool{}
	var out []procID
	for range 8 {
		fresh := false
		escaped := map[int]bool{}
		for _, p := range descendantsOf(pid) {
			if p.pgid != pid || escaped[p.ppid] {
				escaped[p.pid] = true
				if !seen[p.procID] && !p.zombie {
					seen[p.procID], fresh = true, true
					syscall.Kill(p.pid, syscall.SIGSTOP)
					out = append(out, p.procID)
				}
			}
		}
		if !fresh {
			break
		}
	}
	return out
}

// killProcs sends SIGKILL to each process that is still the one recorded.
func killProcs(ids []procID) {
	for _, id := range ids {
		if st, ok := readStat(id.pid); ok && st.start == id.start {
			syscall.Kill(id.pid, syscall.SIGKILL)
		}
	}
}

// killOrphans kills every child of this process for which server is false,
// with everything below it, and reaps them. Only a subreaper has such
// children besides the ones it started, and they are never exec.Cmd's, so
// waiting for them here takes nothing from anyone.
func killOrphans(server func(pid int) bool) {
	var orphans []procStat
	for _, p := range childStats(os.Getpid()) {
		if !server(p.pid) {
			orphans = append(orphans, p)
		}
	}
	for _, o := range orphans {
		var ids []procID
		for _, d := range descendantsOf(o.pid) {
			syscall.Kill(d.pid, syscall.SIGSTOP)
			ids = append(ids, d.procID)
		}
		killProcs(append(ids, o.procID))
	}
	deadline := time.Now().Add(time.Second)
	for _, o := range orphans {
		for {
			pid, _ := syscall.Wait4(o.pid, nil, syscall.WNOHANG, nil)
			if pid != 0 || time.Now().After(deadline) {
				break // reaped, gone already (-1), or stuck in the kernel
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
