//go:build unix

package root

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/internal/testbin"
)

// TestSIGINTRealBinary: the real binary, blocked in a verb (a registry that
// never answers, an MCP server that never completes its handshake), gets a
// real SIGINT and exits 130 promptly, with the failure document for
// --json, the message "interrupted", and no process left behind.
func TestSIGINTRealBinary(t *testing.T) {
	bin := testbin.Plugkit(t)
	hang := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hang <- struct{}{}
		<-r.Context().Done()
	}))
	defer srv.Close()

	marker := "299.5" // sleep's argument, to find the server in /proc
	plugin := filepath.Join(t.TempDir(), "slow")
	if code, _, errOut := plugkit(t, "init", plugin, "--mcp", "stdio"); code != 0 {
		t.Fatal(errOut)
	}
	os.WriteFile(filepath.Join(plugin, "bin", "server"), []byte("#!/bin/sh\nexec sleep "+marker+"\n"), 0o755)

	for _, c := range []struct {
		name    string
		args    []string
		waitFor func() bool
	}{
		{"catalog", []string{"catalog", "--json", "--registry", srv.URL}, func() bool { <-hang; return true }},
		{"resolve", []string{"resolve", "demo", "--json", "--registry", srv.URL}, func() bool { <-hang; return true }},
		{"fetch", []string{"fetch", "demo", filepath.Join(t.TempDir(), "out"), "--json", "--registry", srv.URL}, func() bool { <-hang; return true }},
		{"mcp list", []string{"mcp", "list", "--json", "--data-dir", t.TempDir(), plugin}, func() bool { return waitProcess(marker, true) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			cmd := exec.Command(bin, c.args...)
			cmd.Stdout, cmd.Stderr = &out, &errOut
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir())
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if !c.waitFor() {
				cmd.Process.Kill()
				t.Fatal("the verb never blocked")
			}
			cmd.Process.Signal(syscall.SIGINT)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("still running 20 s after SIGINT\n%s%s", out.String(), errOut.String())
			}
			if code := cmd.ProcessState.ExitCode(); code != command.ExitInterrupted {
				t.Errorf("exit %d, want 130\n%s%s", code, out.String(), errOut.String())
			}
			var doc command.ErrorDoc
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.Error.Code != command.CodeInterrupted {
				t.Errorf("stdout %q (%v), want the interrupted failure document", out.String(), err)
			}
			if !strings.Contains(errOut.String(), "plugkit: interrupted") {
				t.Errorf("stderr %q", errOut.String())
			}
			if waitProcess(marker, false) == false {
				t.Errorf("a server process (sleep %s) survived plugkit", marker)
			}
		})
	}
}

// waitProcess waits up to 10 s until a process whose command line holds
// arg exists (want true) or none does (want false), and reports whether
// that happened.
func waitProcess(arg string, want bool) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if processWithArg(arg) == want {
			return true
		}
	}
	return false
}

func processWithArg(arg string) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte("\x00"+arg+"\x00")) {
			return true
		}
	}
	return false
}
