package ocicmd

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/internal/testservice"
	"github.com/plugkit/plugkit/snapshot"
)

// push, pull, copy, export and the read verbs on OCI sources, against a
// real registry: one identity all the way.
func TestOCIVerbs(t *testing.T) {
	clitest.OCIEnv(t)
	reg := testservice.StartRegistry(t)
	ref := "oci://" + reg.Host + "/plugins/release-notes:1.2.0"

	var pushed struct {
		Reference, Digest, MediaType, ArtifactType string
		Size                                       int64
		Config, Layer                              struct {
			Digest string
			Size   int64
		}
		Annotations map[string]string
	}
	clitest.DecodeOne(t, mustRun(t, "push", clitest.ExamplePlugin(), ref, "--plain-http", "--json"), &pushed)
	if pushed.Reference != ref || !strings.HasPrefix(pushed.Digest, "sha256:") || pushed.MediaType != "application/vnd.oci.image.manifest.v1+json" ||
		pushed.ArtifactType != "application/vnd.colossus.agent-plugin.v1" || pushed.Size == 0 || pushed.Config.Size != 136 || pushed.Layer.Size != 1385 ||
		pushed.Annotations["org.opencontainers.image.version"] != "1.2.0" {
		t.Fatalf("push --json: %+v", pushed)
	}
	// Without a tag the version is the tag; the same plugin, the same digest.
	text := mustRun(t, "push", clitest.ExamplePlugin(), "oci://"+reg.Host+"/plugins/release-notes", "--plain-http")
	if !strings.Contains(text, pushed.Digest) || !strings.Contains(text, ":1.2.0") {
		t.Errorf("second push: %s", text)
	}

	dir := filepath.Join(t.TempDir(), "rn")
	var pulled struct {
		Reference, Digest, Name, Version, Path string
		Files                                  int
	}
	clitest.DecodeOne(t, mustRun(t, "pull", ref, dir, "--plain-http", "--json"), &pulled)
	if pulled.Digest != pushed.Digest || pulled.Name != "release-notes" || pulled.Version != "1.2.0" || pulled.Path != dir || pulled.Files != 8 {
		t.Fatalf("pull --json: %+v", pulled)
	}
	got, _ := snapshot.ReadDir(dir, snapshot.Options{})
	want, _ := snapshot.ReadDir(clitest.ExamplePlugin(), snapshot.Options{})
	if !got.Equal(want) {
		t.Fatalf("pulled tree differs: %v", got.Paths())
	}
	// Into a directory that is not empty: usage error, nothing touched.
	if code, _, _ := runCLI(t, "pull", ref, dir, "--plain-http"); code != 2 {
		t.Errorf("pull into a non-empty directory: exit %d", code)
	}

	// validate and inspect read the artifact too, with its identity.
	mustRun(t, "validate", ref, "--plain-http")
	var insp struct{ Digest string }
	clitest.DecodeOne(t, mustRun(t, "inspect", ref, "--plain-http", "--json"), &insp)
	if insp.Digest != pushed.Digest {
		t.Errorf("inspect digest %s, pushed %s", insp.Digest, pushed.Digest)
	}

	// registry → layout → air-gap tar → another repository.
	layout := filepath.Join(t.TempDir(), "layout")
	var copied struct{ Digest, Destination string }
	clitest.DecodeOne(t, mustRun(t, "copy", ref, "oci-layout:"+layout, "--plain-http", "--json"), &copied)
	if copied.Digest != pushed.Digest || copied.Destination != "oci-layout:"+layout+":1.2.0" {
		t.Fatalf("copy --json: %+v", copied)
	}
	tarFile := filepath.Join(t.TempDir(), "airgap.tar")
	var exported struct {
		Digest  string
		Plugins []struct{ Digest, RefName string }
	}
	clitest.DecodeOne(t, mustRun(t, "export", "oci-layout:"+layout+":1.2.0", tarFile, "--json"), &exported)
	if len(exported.Plugins) != 1 || exported.Plugins[0].Digest != pushed.Digest || exported.Plugins[0].RefName != "1.2.0" {
		t.Fatalf("export --json: %+v", exported)
	}
	first, _ := os.ReadFile(tarFile)
	mustRun(t, "export", ref, tarFile, "--plain-http")
	if again, _ := os.ReadFile(tarFile); !bytes.Equal(first, again) {
		t.Error("export from the registry and from the layout give different bytes")
	}
	mustRun(t, "copy", "oci-layout:"+tarFile, "oci://"+reg.Host+"/disconnected/release-notes:1.2.0", "--plain-http")
	clitest.DecodeOne(t, mustRun(t, "inspect", "oci://"+reg.Host+"/disconnected/release-notes:1.2.0", "--plain-http", "--json"), &insp)
	if insp.Digest != pushed.Digest {
		t.Errorf("after the air gap: %s", insp.Digest)
	}
	for _, name := range []string{filepath.Dir(tarFile)} {
		ents, _ := os.ReadDir(name)
		if len(ents) != 1 {
			t.Errorf("leftovers beside the tar: %v", ents)
		}
	}
}

// What push refuses, and the --json failure document.
func TestPushRefusals(t *testing.T) {
	clitest.OCIEnv(t)
	reg := testservice.StartRegistry(t)
	dst := "oci://" + reg.Host + "/plugins/broken:1.0.0"
	broken := t.TempDir()
	os.WriteFile(filepath.Join(broken, "plugin.json"), []byte(`{"$schema":"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json","name":"broken","version":"1.0.0"}`), 0o644)
	os.MkdirAll(filepath.Join(broken, "skills", "bad"), 0o755)
	os.WriteFile(filepath.Join(broken, "skills", "bad", "SKILL.md"), []byte("---\nname: bad\n---\nno description\n"), 0o644)

	code, stdout, stderr := runCLI(t, "push", broken, dst, "--plain-http", "--json")
	var doc struct {
		Error       struct{ Code, Message string }
		Diagnostics []struct{ Severity, Code, Path string }
	}
	clitest.DecodeOne(t, stdout, &doc)
	if code != 1 || doc.Error.Code != "plugin-invalid" || len(doc.Diagnostics) == 0 || doc.Diagnostics[0].Path != "skills/bad/SKILL.md" {
		t.Fatalf("push with error diagnostics: exit %d %+v\n%s", code, doc, stderr)
	}
	// In text, the report validate prints, then the refusal.
	code, stdout, stderr = runCLI(t, "push", broken, dst, "--plain-http")
	_, vout, _ := runCLI(t, "validate", broken)
	if code != 1 || stdout != vout || !strings.Contains(stderr, "--allow-errors") {
		t.Fatalf("push in text: exit %d\nstdout %q\nvalidate %q\nstderr %q", code, stdout, vout, stderr)
	}
	if code, _, _ := runCLI(t, "pull", dst, filepath.Join(t.TempDir(), "x"), "--plain-http"); code != 1 {
		t.Errorf("a refused push left something to pull (exit %d)", code)
	}
	mustRun(t, "push", broken, dst, "--plain-http", "--allow-errors")

	rejected := t.TempDir()
	os.WriteFile(filepath.Join(rejected, "plugin.json"), []byte(`{"name":"rejected"}`), 0o644)
	if code, stdout, stderr := runCLI(t, "push", rejected, dst, "--plain-http"); code != 1 || !strings.Contains(stdout, "plugin.json") {
		t.Errorf("rejected plugin: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, bad := range []string{"oci://" + reg.Host + "/plugins/x@sha256:" + strings.Repeat("0", 64), "docker://x/y:1", "oci://Bad/Repo:1"} {
		if code, _, _ := runCLI(t, "push", clitest.ExamplePlugin(), bad, "--plain-http"); code != 2 {
			t.Errorf("push to %s: exit %d", bad, code)
		}
	}
	// HTTPS by default: the test registry speaks HTTP only.
	if code, _, _ := runCLI(t, "push", clitest.ExamplePlugin(), dst); code == 0 {
		t.Error("push over HTTPS to an HTTP registry succeeded")
	}
}

// A non-plugin artifact is refused by pull with its code, and the
// directory is not created.
func TestPullRefusesNonPlugin(t *testing.T) {
	clitest.OCIEnv(t)
	reg := testservice.StartRegistry(t)
	file := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(file, []byte("hello"), 0o644)
	oras := testservice.Binary(t, "oras", "go install oras.land/oras/cmd/oras@v1.3.6")
	runTool(t, oras, "push", "--plain-http", "--disable-path-validation", "--artifact-type", "application/vnd.example.notes", reg.Host+"/other/notes:1", file)
	dir := filepath.Join(t.TempDir(), "notes")
	code, stdout, _ := runCLI(t, "pull", "oci://"+reg.Host+"/other/notes:1", dir, "--plain-http", "--json")
	var doc struct {
		Error struct{ Code, Message string }
	}
	clitest.DecodeOne(t, stdout, &doc)
	if code != 1 || doc.Error.Code != "not-a-plugin" {
		t.Fatalf("exit %d, %+v", code, doc)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("pull of a refused artifact created %s", dir)
	}
	// copy and export refuse it too, and write nothing: no layout
	// directory, no tar, nothing beside it.
	out := t.TempDir()
	layout := filepath.Join(out, "layout")
	if code, stdout, _ := runCLI(t, "copy", "oci://"+reg.Host+"/other/notes:1", "oci-layout:"+layout, "--plain-http", "--json"); code != 1 || !strings.Contains(stdout, `"not-a-plugin"`) {
		t.Errorf("copy of a non-plugin: exit %d %s", code, stdout)
	}
	if code, stdout, _ := runCLI(t, "export", "oci-layout:"+examplePluginLayout(t)+":1.2.0", "oci://"+reg.Host+"/other/notes:1", filepath.Join(out, "x.tar"), "--plain-http", "--json"); code != 1 || !strings.Contains(stdout, `"not-a-plugin"`) {
		t.Errorf("export of a non-plugin: exit %d %s", code, stdout)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("refused copy and export left %v", ents)
	}
}

// examplePluginLayout pushes examples/release-notes into a new layout
// directory, tagged 1.2.0, and returns the directory.
func examplePluginLayout(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "release-notes")
	mustRun(t, "push", clitest.ExamplePlugin(), "oci-layout:"+dir+":1.2.0")
	return dir
}

// Export of several plugins names each REPOSITORY:TAG in index.json (a
// layout's file name standing for its repository); the file then needs a
// digest to say which plugin to copy.
func TestExportSeveralPlugins(t *testing.T) {
	clitest.OCIEnv(t)
	reg := testservice.StartRegistry(t)
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "plugin.json"), []byte(`{"$schema":"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json","name":"other","version":"0.1.0"}`), 0o644)
	mustRun(t, "push", other, "oci://"+reg.Host+"/team/other:0.1.0", "--plain-http")
	layout := examplePluginLayout(t)
	tarFile := filepath.Join(t.TempDir(), "plugins.tar")
	var exported struct {
		Plugins []struct{ Digest, RefName string }
	}
	clitest.DecodeOne(t, mustRun(t, "export", "oci-layout:"+layout+":1.2.0", "oci://"+reg.Host+"/team/other:0.1.0", tarFile, "--plain-http", "--json"), &exported)
	if len(exported.Plugins) != 2 || exported.Plugins[0].RefName != "release-notes:1.2.0" || exported.Plugins[1].RefName != "team/other:0.1.0" {
		t.Fatalf("export --json: %+v", exported)
	}
	idx := tarMember(t, tarFile, "index.json")
	for _, name := range []string{`"org.opencontainers.image.ref.name":"release-notes:1.2.0"`, `"org.opencontainers.image.ref.name":"team/other:0.1.0"`} {
		if !strings.Contains(string(idx), name) {
			t.Errorf("index.json lacks %s: %s", name, idx)
		}
	}
	dst := "oci://" + reg.Host + "/disconnected/other:0.1.0"
	code, stdout, _ := runCLI(t, "copy", "oci-layout:"+tarFile, dst, "--plain-http", "--json")
	if code != 1 || !strings.Contains(stdout, `"ambiguous-reference"`) || !strings.Contains(stdout, exported.Plugins[1].Digest) {
		t.Fatalf("copy from a tar of two plugins without a digest: exit %d %s", code, stdout)
	}
	var copied struct{ Digest string }
	clitest.DecodeOne(t, mustRun(t, "copy", "oci-layout:"+tarFile+"@"+exported.Plugins[1].Digest, dst, "--plain-http", "--json"), &copied)
	if copied.Digest != exported.Plugins[1].Digest {
		t.Errorf("copied %s, exported %s", copied.Digest, exported.Plugins[1].Digest)
	}
}

// tarMember reads one member of a tar file.
func tarMember(t *testing.T, file, name string) []byte {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s in %s: %v", name, file, err)
		}
		if h.Name == name {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}

// login checks the password before storing it; the stored credentials
// serve push; logout removes them.
func TestLoginLogoutVerbs(t *testing.T) {
	cfgDir := clitest.OCIEnv(t)
	reg := testservice.StartAuthRegistry(t, "alice", "s3cret")
	login := func(password string) int {
		var out, errb bytes.Buffer
		f := factory.Quiet(&out, &errb)
		f.In = strings.NewReader(password + "\n")
		return program().RunContext(context.Background(), f, []string{"login", reg.Host, "--plain-http", "-u", "alice", "--password-stdin"})
	}
	if code := login("wrong"); code != 1 {
		t.Fatalf("wrong password: exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(cfgDir, "config.json")); !os.IsNotExist(err) {
		t.Fatal("a refused login stored something")
	}
	if code, _, _ := runCLI(t, "push", clitest.ExamplePlugin(), "oci://"+reg.Host+"/p/rn:1", "--plain-http"); code != 1 {
		t.Fatalf("push without credentials: exit %d", code)
	}
	if code := login("s3cret"); code != 0 {
		t.Fatalf("login: exit %d", code)
	}
	mustRun(t, "push", clitest.ExamplePlugin(), "oci://"+reg.Host+"/p/rn:1", "--plain-http")
	mustRun(t, "logout", reg.Host)
	if b, _ := os.ReadFile(filepath.Join(cfgDir, "config.json")); strings.Contains(string(b), reg.Host) {
		t.Fatalf("logout left %s", b)
	}
	// No password on a non-terminal without --password-stdin: usage.
	if code, _, _ := runCLI(t, "login", reg.Host, "-u", "alice"); code != 2 {
		t.Errorf("login without a password source: exit %d", code)
	}
}

// runTool runs another program for a test and fails the test if it fails.
func runTool(t *testing.T, bin string, args ...string) {
	t.Helper()
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", bin, args, err, out)
	}
}
