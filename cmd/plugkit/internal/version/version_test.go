package version

import (
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
)

// TestVersion: plugkit version, its --json document and --version all
// come from the build information, with the supported spec versions.
func TestVersion(t *testing.T) {
	code, text, _ := runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(text, "plugkit ") || !strings.Contains(text, "agent plugins: 1.0.0\n") ||
		!strings.Contains(text, "go:            "+runtime.Version()+"\n") {
		t.Fatalf("exit %d\n%s", code, text)
	}
	code, out, _ := runCLI(t, "--version")
	if code != 0 || out != text {
		t.Errorf("--version printed %q, want plugkit version's %q", out, text)
	}
	code, out, _ = runCLI(t, "version", "--json")
	var v Info
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil || code != 0 {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	if v.Version == "" || v.Go != runtime.Version() || !slices.Equal(v.SpecVersions, agentplugin.SupportedVersions()) {
		t.Errorf("%+v", v)
	}
	// A build from VCS names its revision; "go test" binaries have none,
	// so the text form is checked on a value.
	v = Info{Version: "v1.2.3", Revision: "abc", Time: "2026-01-02T03:04:05Z", Modified: true, Go: "go1.26.0", SpecVersions: []string{"1.0.0"}}
	want := "plugkit v1.2.3\nrevision:      abc (2026-01-02T03:04:05Z) with uncommitted changes\ngo:            go1.26.0\nagent plugins: 1.0.0\n"
	if got := v.Text(); got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
}
