package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/root"
	"github.com/plugkit/plugkit/internal/testservice"
)

// TestTransferProgress: fetch, publish, push and pull show their transfer
// on a terminal (the archive's bytes), install and sync count their
// plugins, and nothing draws with --json.
func TestTransferProgress(t *testing.T) {
	reg, alice := "--registry="+clitest.NewRegistry(t), clitest.TokenFile(t, clitest.AliceToken)
	src := clitest.WritePlugin(t, map[string]string{"plugin.json": clitest.HelloManifest})
	ref := "oci://" + testservice.StartRegistry(t).Host + "/plugins/hello:1"
	home := "--home=" + filepath.Join(t.TempDir(), "home")
	for _, c := range []struct {
		args []string
		bar  string
	}{
		{[]string{"publish", src, reg, alice}, "publish hello"},
		{[]string{"fetch", "hello", filepath.Join(t.TempDir(), "a"), reg}, "fetch hello"},
		{[]string{"fetch", "hello", filepath.Join(t.TempDir(), "b"), reg, "--json"}, ""},
		{[]string{"push", src, ref, "--plain-http"}, "push"},
		{[]string{"pull", ref, filepath.Join(t.TempDir(), "c"), "--plain-http"}, "pull"},
		{[]string{"pull", ref, filepath.Join(t.TempDir(), "d"), "--plain-http", "--json"}, ""},
		{[]string{"install", src, home, "--yes"}, "install"},
		{[]string{"sync", home}, "sync"},
		{[]string{"sync", home, "--json"}, ""},
	} {
		var out, errb bytes.Buffer
		f := factory.Quiet(&out, &errb)
		f.ErrTerminal, f.ProgressDelay = true, 0
		if code := root.Program().RunContext(context.Background(), f, c.args); code != 0 {
			t.Fatalf("plugkit %v: exit %d\n%s%s", c.args, code, out.String(), errb.String())
		}
		drawn := strings.Contains(errb.String(), " / ")
		if c.bar == "" && errb.Len() != 0 || c.bar != "" && (!drawn || !strings.Contains(errb.String(), c.bar)) {
			t.Errorf("plugkit %v: stderr %q, want a bar named %q", c.args, errb.String(), c.bar)
		}
		if strings.Contains(out.String(), " / ") {
			t.Errorf("plugkit %v: the bar reached stdout: %q", c.args, out.String())
		}
	}
}
