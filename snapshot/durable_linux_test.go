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

// TestWriteDirDurable is issue 8's durability item: the tree WriteDir
// writes reaches stable storage before the rename that publishes it, with
// one syncfs rather than a sync per file, and the rename itself is
// flushed. It runs WriteDir in a child process under strace and reads the
// order of the system calls.
func TestWriteDirDurable(t *testing.T) {
	if dir := os.Getenv("PLUGKIT_WRITEDIR_CHILD"); dir != "" {
		files := map[string][]byte{}
		for i := range 50 {
			files[fmt.Sprintf("d%d/f%d", i%5, i)] = []byte("x")
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
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace")
	cmd := exec.Command(strace, "-f", "-qq", "-o", trace, "-e", "trace=syncfs,fsync,fdatasync,sync,rename,renameat,renameat2",
		os.Args[0], "-test.run=^TestWriteDirDurable$")
	cmd.Env = append(os.Environ(), "PLUGKIT_WRITEDIR_CHILD="+dir)
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
	got := strings.Join(calls, " ")
	if !regexp.MustCompile(`^syncfs rename(at2?)? fsync$`).MatchString(got) {
		t.Errorf("system calls %q, want one syncfs, the rename, then one fsync of the parent\n%s", got, b)
	}
}
