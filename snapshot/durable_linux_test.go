package snapshot_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/snapshot"
)

// TestWriteDirDurable: the tree WriteDir
// writes reaches stable storage before the rename that publishes it, with
// one syncfs rather than a sync per file, and the rename itself is
// flushed. It runs WriteDir in a child process under strace and reads the
// order of the system calls.
//
// A tree larger than a few MB is also flushed early, while it is being
// written (DirWriter.flushEarly): then at least one syncfs starts before
// the last write, and the one before the rename still comes after it.
func TestWriteDirDurable(t *testing.T) {
	if dir := os.Getenv("PLUGKIT_WRITEDIR_CHILD"); dir != "" {
		n, size := 50, 1
		if os.Getenv("PLUGKIT_WRITEDIR_LARGE") != "" {
			n, size = 24, 1<<20
		}
		files := map[string][]byte{}
		for i := range n {
			files[fmt.Sprintf("d%d/f%d", i%5, i)] = []byte(strings.Repeat("x", size))
		}
		s, err := snapshot.FromFiles(files)
		if err == nil {
			err = snapshot.WriteDir(filepath.Join(dir, "out"), s)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed: cannot observe the system calls (apt-get install strace)")
	}
	got := writeDirCalls(t, strace, false)
	if !regexp.MustCompile(`^(write )+syncfs rename(at2?)? fsync$`).MatchString(got) {
		t.Errorf("system calls %q, want the writes, one syncfs, the rename, then one fsync of the parent", got)
	}
	got = writeDirCalls(t, strace, true)
	if !regexp.MustCompile(`^(write |syncfs )*syncfs (write |syncfs )*write syncfs rename(at2?)? fsync$`).MatchString(got) {
		t.Errorf("system calls %q, want a syncfs among the writes, then after them one syncfs, the rename, then one fsync of the parent", got)
	}
}

// writeDirCalls runs TestWriteDirDurable's child under strace, writing a
// large tree or a small one, and returns the names of its system calls
// that write or flush, in order.
func writeDirCalls(t *testing.T, strace string, large bool) string {
	t.Helper()
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace")
	cmd := exec.Command(strace, "-f", "-qq", "-o", trace, "-e", "trace=write,syncfs,fsync,fdatasync,sync,rename,renameat,renameat2",
		os.Args[0], "-test.run=^TestWriteDirDurable$")
	cmd.Env = append(os.Environ(), "PLUGKIT_WRITEDIR_CHILD="+dir)
	if large {
		cmd.Env = append(cmd.Env, "PLUGKIT_WRITEDIR_LARGE=1")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(out), "ptrace") || strings.Contains(string(out), "Operation not permitted") {
			t.Skipf("strace cannot trace here: %s", out)
		}
		t.Fatalf("%v: %s", err, out)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, m := range regexp.MustCompile(`(?m)^\d+\s+(\w+)\(`).FindAllStringSubmatch(string(b), -1) {
		calls = append(calls, m[1])
	}
	return strings.Join(calls, " ")
}
