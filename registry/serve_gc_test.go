package registry

import (
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
)

// servedGCPercent reads go_gc_gogc_percent from a server's /metrics.
func servedGCPercent(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url + metricsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(line, "go_gc_gogc_percent "); ok {
			p, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("go_gc_gogc_percent %q", v)
			}
			return p
		}
	}
	t.Fatalf("no go_gc_gogc_percent in /metrics:\n%s", body)
	return 0
}

// TestE2EServeKeepsHeapFloor: plugkit serve keeps the floor when GOGC is
// not set, and leaves an operator's GOGC alone.
func TestE2EServeKeepsHeapFloor(t *testing.T) {
	t.Setenv("GOGC", "") // restored after the test
	os.Unsetenv("GOGC")
	srv := startServe(t, t.TempDir())
	// The floor of a new server's small heap is more than GOGC's 100.
	if p := servedGCPercent(t, srv.url); p <= 100 {
		t.Errorf("without GOGC: GC percent %d, want the floor's (over 100 for a small heap)", p)
	}
	srv = startServeEnv(t, t.TempDir(), []string{"GOGC=150"})
	if p := servedGCPercent(t, srv.url); p != 150 {
		t.Errorf("with GOGC=150: GC percent %d", p)
	}
}
