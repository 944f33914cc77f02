package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/internal/testbin"
)

// TestMain removes the programs the tests built (the plugkit binary, the
// MCP test server) once they are done.
func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }

// TestCollectorAfterStart: the collector, held off while the package
// initialisers run (internal/gcinit), is back on by the time a verb runs:
// validating a plugin of 24 MB collects, with GOGC as the user set it.
func TestCollectorAfterStart(t *testing.T) {
	bin := testbin.Plugkit(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(testManifest), 0o644)
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for i := range 24 {
		os.WriteFile(filepath.Join(dir, "data", fmt.Sprintf("f%02d", i)), chunk, 0o644)
	}
	for _, gogc := range []string{"100", "50"} {
		cmd := exec.Command(bin, "validate", dir)
		cmd.Env = append(os.Environ(), "GODEBUG=gctrace=1", "GOGC="+gogc)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("GOGC=%s: %v\n%s", gogc, err, stderr.String())
		}
		if !strings.Contains(stderr.String(), "gc 1 @") {
			t.Errorf("GOGC=%s: validating 24 MB never collected: %q", gogc, stderr.String())
		}
	}
}
