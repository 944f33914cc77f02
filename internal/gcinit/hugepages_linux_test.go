package gcinit

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/plugkit/plugkit/internal/hostile"
	"github.com/plugkit/plugkit/internal/pages"
)

// fill allocates and touches n bytes of heap in pages of their own, kept
// live, and returns them and the page faults it took.
func fill(n int) ([][]byte, int64) {
	before := hostile.Faults()
	held := make([][]byte, 0, n/4096)
	for range n / 4096 {
		b := make([]byte, 4096)
		b[0], b[4095] = 1, 1
		held = append(held, b)
	}
	return held, hostile.Faults() - before
}

// TestAskHugePagesSavesFaults: once askHugePages has run, the heap grows
// into memory the kernel backs with huge pages, one fault for many pages.
// The heap filled before it stays live, so that the second fill cannot
// reuse memory the first one faulted in. It runs in a process of its own:
// in this one, TestRestore's collection has already asked.
func TestAskHugePagesSavesFaults(t *testing.T) {
	if pages.HugeSize() == 0 {
		t.Skip("this kernel's transparent huge pages are not in madvise mode: askHugePages leaves it alone")
	}
	if os.Getenv("GCINIT_HUGE_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAskHugePagesSavesFaults$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "GCINIT_HUGE_CHILD=1")
		out, err := cmd.CombinedOutput()
		t.Logf("%s", out)
		if err != nil || !bytes.Contains(out, []byte("--- PASS: TestAskHugePagesSavesFaults")) {
			t.Fatalf("the measuring process failed: %v", err)
		}
		return
	}
	const n = 16 << 20
	plain, plainFaults := fill(n)
	askHugePages()
	huge, hugeFaults := fill(n)
	runtime.KeepAlive(plain)
	runtime.KeepAlive(huge)
	t.Logf("page faults filling %d MiB of heap: %d before askHugePages, %d after", n>>20, plainFaults, hugeFaults)
	// The race detector's shadow memory faults as often in both fills;
	// the difference is the heap's own pages.
	if saved := plainFaults - hugeFaults; saved < n/4096/2 {
		t.Errorf("askHugePages saved %d page faults of %d MiB of heap (%d pages), want at least half", saved, n>>20, n/4096)
	}
}
