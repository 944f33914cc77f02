package home

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/install"
	"github.com/plugkit/plugkit/registry"
	"github.com/plugkit/plugkit/registry/storage"
)

// TestInstallReportWithoutToken: a registry that takes installation
// reports only with a token (the default) refuses the report of an
// install without one. The plugin is installed all the same, whole (exit
// 0, check passes, no leftover), a warning on stderr says why and what to
// do, and --json says "failed: ..." in the change. Running the install
// again with a token sends the report; update --report reports too.
func TestInstallReportWithoutToken(t *testing.T) {
	t.Setenv("PLUGKIT_TOKEN", "")
	url := clitest.NewRegistry(t)
	src := clitest.WritePlugin(t, map[string]string{"plugin.json": clitest.HelloManifest})
	if code, _, errOut := runCLI(t, "publish", src, "--registry="+url, clitest.TokenFile(t, clitest.AliceToken)); code != 0 {
		t.Fatalf("publish: %s", errOut)
	}
	home := filepath.Join(t.TempDir(), "home")
	args := []string{"install", "hello", "--registry", url, "--home", home, "--yes", "--report"}

	code, out, errOut := runCLI(t, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("install --report without a token: exit %d\n%s\n%s", code, out, errOut)
	}
	var res install.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Changes) != 1 || res.Changes[0].Action != install.ActionInstall ||
		!strings.HasPrefix(res.Changes[0].Report, "failed: ") || !strings.Contains(res.Changes[0].Report, "401") {
		t.Fatalf("install document: %v\n%s", err, out)
	}
	if !strings.Contains(errOut, "plugkit: warning: hello 0.1.0 is installed, but reporting it to "+url+" failed: this registry needs a token") ||
		!strings.Contains(errOut, "run the command again with --report") {
		t.Fatalf("warning: %q", errOut)
	}
	if code, out, _ := runCLI(t, "check", "--home", home); code != 0 || out != "hello: ok\n" {
		t.Fatalf("check after a failed report: %d %q", code, out)
	}
	for _, leftover := range []string{".journal", ".tmp"} {
		if _, err := os.Stat(filepath.Join(home, leftover)); !os.IsNotExist(err) {
			t.Errorf("%s after a failed report: %v", leftover, err)
		}
	}

	// Again, in text: up to date, reported again, failing again.
	code, out, errOut = runCLI(t, args...)
	if code != 0 || !strings.Contains(out, "hello 0.1.0 is up to date") || !strings.Contains(out, "report to the registry: failed: ") ||
		!strings.Contains(errOut, "warning: hello 0.1.0 is installed") {
		t.Fatalf("install again without a token: %d\n%s\n%s", code, out, errOut)
	}

	// With a reader token the same command sends the report.
	code, out, errOut = runCLI(t, append(args, clitest.TokenFile(t, clitest.ReaderToken), "--json")...)
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || res.Changes[0].Action != install.ActionNone ||
		res.Changes[0].Report != install.ReportSent || errOut != "" {
		t.Fatalf("install again with a token: %d %v\n%s\n%s", code, err, out, errOut)
	}
	list := installationsOf(t, url, clitest.TokenFile(t, clitest.ReaderToken))
	if len(list) != 1 || list[0].Status != "installed" || list[0].ReleaseID != "hello@0.1.0" || list[0].Reporter != "host" {
		t.Fatalf("installations: %+v", list)
	}

	// update --report: a new release updates; its report fails without a
	// token, warned about, exit 0.
	if code, _, errOut := runCLI(t, "publish", clitest.WritePlugin(t, map[string]string{"plugin.json": strings.Replace(clitest.HelloManifest, "0.1.0", "0.2.0", 1)}),
		"--registry="+url, clitest.TokenFile(t, clitest.AliceToken)); code != 0 {
		t.Fatalf("publish 0.2.0: %s", errOut)
	}
	code, out, errOut = runCLI(t, "update", "--home", home, "--report", "--json")
	var doc OutcomeDoc
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || doc.Plugins[0].Outcome != OutcomeUpdated ||
		!strings.HasPrefix(doc.Plugins[0].Change.Report, "failed: ") || !strings.Contains(errOut, "warning: hello 0.2.0 is installed") {
		t.Fatalf("update --report without a token: %d %v\n%s\n%s", code, err, out, errOut)
	}
	if list := installationsOf(t, url, clitest.TokenFile(t, clitest.ReaderToken)); len(list) != 1 || list[0].ReleaseID != "hello@0.1.0" {
		t.Fatalf("a refused report was recorded: %+v", list)
	}
	code, out, errOut = runCLI(t, "update", "--home", home, "--report", clitest.TokenFile(t, clitest.ReaderToken))
	if code != 0 || !strings.Contains(out, "hello 0.2.0 is up to date") || !strings.Contains(out, "report to the registry: reported") || errOut != "" {
		t.Fatalf("update --report with a token: %d\n%s\n%s", code, out, errOut)
	}
	if list := installationsOf(t, url, clitest.TokenFile(t, clitest.ReaderToken)); len(list) != 1 || list[0].ReleaseID != "hello@0.2.0" || list[0].Status != "installed" {
		t.Fatalf("installations after update: %+v", list)
	}
}

// TestInstallReportAnonymous: a registry run with --anonymous-reports
// takes the report without a token. --report of a plugin that comes from
// no registry warns that nothing was reported.
func TestInstallReportAnonymous(t *testing.T) {
	t.Setenv("PLUGKIT_TOKEN", "")
	db, blobs, err := storage.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h, err := registry.New(registry.Config{Store: db, Blobs: blobs, AnonymousRead: true, AnonymousReports: true,
		PublishTokens: []string{"alice=" + clitest.AliceToken}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	src := clitest.WritePlugin(t, map[string]string{"plugin.json": clitest.HelloManifest})
	if code, _, errOut := runCLI(t, "publish", src, "--registry="+ts.URL, clitest.TokenFile(t, clitest.AliceToken)); code != 0 {
		t.Fatalf("publish: %s", errOut)
	}
	code, out, errOut := runCLI(t, "install", "hello", "--registry", ts.URL, "--home", filepath.Join(t.TempDir(), "home"), "--yes", "--report")
	if code != 0 || !strings.Contains(out, "report to the registry: reported") || errOut != "" {
		t.Fatalf("install --report: %d\n%s\n%s", code, out, errOut)
	}
	if list := installationsOf(t, ts.URL); len(list) != 1 || list[0].Status != "installed" {
		t.Fatalf("installations: %+v", list)
	}
	// --report with nothing from a registry says so.
	code, out, errOut = runCLI(t, "install", src, "--home", filepath.Join(t.TempDir(), "home"), "--yes", "--report")
	if code != 0 || !strings.Contains(out, "installed hello 0.1.0") || strings.Contains(out, "report to the registry") ||
		!strings.Contains(errOut, "warning: --report: no plugin here comes from a Backplane registry") {
		t.Fatalf("install --report of a directory: %d\n%s\n%s", code, out, errOut)
	}
}

// installationsOf lists a registry's installation reports (with the
// token flag given, if any).
func installationsOf(t *testing.T, url string, token ...string) []distribution.Installation {
	t.Helper()
	code, out, errOut := runCLI(t, append([]string{"installations", "--registry=" + url, "--json"}, token...)...)
	var doc distribution.Installations
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil {
		t.Fatalf("installations: %d %v\n%s", code, err, errOut)
	}
	return doc.Installations
}
