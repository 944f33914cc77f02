package serve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plugkit/plugkit/internal/testbin"
	"github.com/plugkit/plugkit/internal/testservice"
)

// TestServeHoldsDataDir runs real servers: while one serves a --data
// directory, a second on it exits 1 naming the directory and the first
// one's pid, and serves nothing; once the first exits, a new one starts.
func TestServeHoldsDataDir(t *testing.T) {
	bin := testbin.Plugkit(t)
	data := filepath.Join(t.TempDir(), "reg")
	serve := func(ctx context.Context) *exec.Cmd {
		cmd := exec.CommandContext(ctx, bin, "serve", "--data", data, "--addr", "127.0.0.1:0")
		cmd.Env = append(os.Environ(), "PLUGKIT_PUBLISH_TOKENS=", "PLUGKIT_READ_TOKENS=", "PLUGKIT_ADMIN_TOKENS=")
		return cmd
	}
	first, _ := testservice.StartServe(t, serve(t.Context()))

	// A second that started anyway is killed when this runs out.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	out, err := serve(ctx).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("second serve on %s: %v, want exit 1\n%s", data, err, out)
	}
	msg := string(out)
	if !strings.Contains(msg, data) || !strings.Contains(msg, fmt.Sprintf("pid %d", first.Cmd.Process.Pid)) ||
		!strings.Contains(msg, "stop that plugkit serve first") || strings.Contains(msg, "listening on") {
		t.Errorf("second serve said:\n%s", msg)
	}

	if err := first.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("first serve: %v\n%s", err, first.LogText())
	}
	testservice.StartServe(t, serve(t.Context()))
}
