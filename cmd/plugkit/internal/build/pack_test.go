package build

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/snapshot"
)

func TestPackWritesValidatedArchive(t *testing.T) {
	dir := clitest.WritePackPlugin(t, clitest.PackManifest)
	out := filepath.Join(t.TempDir(), "demo.tar.gz")
	code, stdout, stderr := runCLI(t, "pack", dir, "-o", out, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Digest, Path, Name, Version string
		Size, Files                 int
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&res); err != nil || dec.More() {
		t.Fatalf("stdout is not one JSON document: %q (%v)", stdout, err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if res.Digest != archive.Digest(b) || res.Size != len(b) || res.Path != out || res.Name != "demo" || res.Version != "1.2.0" || res.Files != 3 {
		t.Errorf("result %+v", res)
	}
	got, err := archive.Unpack(b, archive.UnpackOptions{})
	want, _ := snapshot.ReadDir(dir, snapshot.Options{})
	if err != nil || !got.Equal(want) || got.Mode("bin/tool") != 0o755 {
		t.Fatalf("archive holds %v (%v)", got, err)
	}
	if info, _ := os.Stat(out); info.Mode().Perm() != 0o644 {
		t.Errorf("archive mode %v", info.Mode())
	}
}

// Same directory content, written in another order at other times: same
// bytes. The text output gives the digest.
func TestPackIsReproducible(t *testing.T) {
	a := clitest.WritePackPlugin(t, clitest.PackManifest)
	b := clitest.WritePackPlugin(t, clitest.PackManifest)
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	filepath.Walk(b, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) })
	outDir := t.TempDir()
	var digests []string
	for i, d := range []string{a, b} {
		out := filepath.Join(outDir, []string{"a.tgz", "b.tgz"}[i])
		code, stdout, stderr := runCLI(t, "pack", d, "-o", out)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		digest, _, _ := strings.Cut(strings.TrimPrefix(stdout, "digest: "), "\n")
		digests = append(digests, digest)
	}
	x, _ := os.ReadFile(filepath.Join(outDir, "a.tgz"))
	y, _ := os.ReadFile(filepath.Join(outDir, "b.tgz"))
	if !bytes.Equal(x, y) || digests[0] != digests[1] || digests[0] != archive.Digest(x) {
		t.Fatalf("digests %v differ or do not match the bytes", digests)
	}
}

// Without -o the archive is NAME-VERSION.tar.gz in the current directory,
// and --root puts the entries under a folder.
func TestPackDefaultNameAndRoot(t *testing.T) {
	dir := clitest.WritePackPlugin(t, clitest.PackManifest)
	t.Chdir(t.TempDir())
	if code, _, stderr := runCLI(t, "pack", dir, "--root", "demo"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile("demo-1.2.0.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := archive.Unpack(b, archive.UnpackOptions{Root: "demo"}); err != nil {
		t.Fatal(err)
	}
	for in, want := range map[[2]string]string{{"demo", ""}: "demo.tar.gz", {"demo", "1.0/../x y"}: "demo-1.0_.._x_y.tar.gz"} {
		if got := defaultArchiveName(in[0], in[1]); got != want {
			t.Errorf("defaultArchiveName%v = %q, want %q", in, got, want)
		}
	}
}

// A plugin the specification rejects is not packed: exit 1, the
// diagnostics on stdout (or in the JSON failure document), the output
// untouched.
func TestPackRefusesRejectedPlugin(t *testing.T) {
	dir := clitest.WritePackPlugin(t, `{"$schema":"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json","name":"Not A Valid Name"}`)
	outDir := t.TempDir()
	out := filepath.Join(outDir, "demo.tar.gz")
	os.WriteFile(out, []byte("previous"), 0o644)

	code, stdout, stderr := runCLI(t, "pack", dir, "-o", out)
	if code != 1 || !strings.HasPrefix(stdout, "plugin.json:1:80: error[manifest-name-invalid]") ||
		stderr != "plugkit: plugin rejected (1 error, 0 warnings)\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, "pack", dir, "-o", out, "--json")
	doc := clitest.DecodeErrorDoc(t, stdout)
	if code != 1 || doc.Error.Code != command.CodeRejected || len(doc.Diagnostics) != 1 || doc.Diagnostics[0].Code != "manifest-name-invalid" {
		t.Fatalf("exit %d, %+v", code, doc)
	}
	if b, _ := os.ReadFile(out); string(b) != "previous" {
		t.Errorf("output overwritten: %q", b)
	}
	if entries, _ := os.ReadDir(outDir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

// TestPackRefusesErrorDiagnostics: a plugin that loads with error
// diagnostics is refused as push and publish refuse it (exit 1, the
// report validate prints, nothing written); --allow-errors packs it.
func TestPackRefusesErrorDiagnostics(t *testing.T) {
	dir := clitest.WritePackPlugin(t, clitest.PackManifest)
	os.MkdirAll(filepath.Join(dir, "skills", "bad"), 0o755)
	os.WriteFile(filepath.Join(dir, "skills", "bad", "SKILL.md"), []byte("---\nname: bad\n---\nno description\n"), 0o644)
	outDir := t.TempDir()
	out := filepath.Join(outDir, "demo.tar.gz")

	code, stdout, stderr := runCLI(t, "pack", dir, "-o", out)
	_, vout, _ := runCLI(t, "validate", dir)
	if code != 1 || stdout != vout || stderr != "plugkit: "+dir+" has error diagnostics: not packed (--allow-errors packs it anyway)\n" {
		t.Fatalf("exit %d\nstdout %q\nvalidate %q\nstderr %q", code, stdout, vout, stderr)
	}
	code, stdout, _ = runCLI(t, "pack", dir, "-o", out, "--json")
	doc := clitest.DecodeErrorDoc(t, stdout)
	if code != 1 || doc.Error.Code != command.CodeInvalid || len(doc.Diagnostics) == 0 || doc.Diagnostics[0].Path != "skills/bad/SKILL.md" {
		t.Fatalf("--json: exit %d, %+v", code, doc)
	}
	if entries, _ := os.ReadDir(outDir); len(entries) != 0 {
		t.Fatalf("a refused pack wrote %v", entries)
	}
	// Without -o either: the default name is not written.
	t.Chdir(outDir)
	if code, _, _ := runCLI(t, "pack", dir); code != 1 {
		t.Fatalf("pack without -o: exit %d", code)
	}
	if entries, _ := os.ReadDir(outDir); len(entries) != 0 {
		t.Fatalf("a refused pack wrote %v", entries)
	}

	code, stdout, stderr = runCLI(t, "pack", dir, "-o", out, "--allow-errors", "--json")
	var res packResult
	if err := json.Unmarshal([]byte(stdout), &res); code != 0 || err != nil || res.Path != out || len(res.Diagnostics) == 0 {
		t.Fatalf("--allow-errors: exit %d %v\n%s%s", code, err, stdout, stderr)
	}
	if code, stdout, _ := runCLI(t, "validate", out); code != 1 || !strings.Contains(stdout, "skills/bad/SKILL.md") {
		t.Errorf("the archive packed with --allow-errors: validate exit %d\n%s", code, stdout)
	}
}

// TestPackLinkRule: one link rule for validate, inspect and pack. A link
// that stays inside the root is packed as the file it points to, validate
// says nothing about it, and inspect's digest is the digest pack writes;
// --strict-links refuses it in all three.
func TestPackLinkRule(t *testing.T) {
	dir := clitest.WritePackPlugin(t, clitest.PackManifest)
	os.WriteFile(filepath.Join(dir, "LICENSE"), []byte("MIT\n"), 0o644)
	if err := os.Symlink("LICENSE", filepath.Join(dir, "COPYING")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "x.tar.gz")
	code, stdout, stderr := runCLI(t, "validate", dir)
	if code != 0 || strings.Contains(stdout, "warning[") {
		t.Fatalf("validate: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "pack", dir, "-o", out, "--json")
	if code != 0 {
		t.Fatalf("pack: exit %d\n%s%s", code, stdout, stderr)
	}
	var res packResult
	json.Unmarshal([]byte(stdout), &res)
	b, _ := os.ReadFile(out)
	snap, err := archive.Unpack(b, archive.UnpackOptions{})
	if err != nil || string(snap.Files["COPYING"]) != "MIT\n" || snap.Mode("COPYING") != 0o644 {
		t.Fatalf("COPYING not packed as the file it points to: %v", err)
	}
	_, stdout, _ = runCLI(t, "inspect", "--json", dir)
	var ins inspectReport
	json.Unmarshal([]byte(stdout), &ins)
	if ins.Digest != res.Digest || ins.Digest != archive.Digest(b) {
		t.Errorf("inspect says %s, pack wrote %s", ins.Digest, archive.Digest(b))
	}

	os.Remove(out)
	for _, verb := range []string{"validate", "inspect", "pack"} {
		args := []string{verb, "--strict-links", dir}
		if verb == "pack" {
			args = append(args, "-o", out)
		}
		code, stdout, stderr := runCLI(t, args...)
		if code != 1 || !strings.Contains(stdout+stderr, "COPYING") {
			t.Errorf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("archive written for a refused directory")
	}
	if code, _, _ := runCLI(t, "pack", filepath.Join(dir, "missing"), "-o", out); code != 2 {
		t.Errorf("missing directory: exit %d", code)
	}
	if code, _, _ := runCLI(t, "pack"); code != 2 {
		t.Errorf("no argument: exit %d", code)
	}
}

// A link that escapes the root is left out with a warning, as validate
// reports it, and the rest is packed.
func TestPackLeavesOutEscapingLink(t *testing.T) {
	dir := clitest.WritePackPlugin(t, clitest.PackManifest)
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("s3cret"), 0o644)
	os.Symlink(secret, filepath.Join(dir, "leak"))
	out := filepath.Join(t.TempDir(), "x.tar.gz")
	code, stdout, _ := runCLI(t, "pack", dir, "-o", out)
	if code != 0 || !strings.Contains(stdout, "leak: warning[path-escapes-root]") {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	b, _ := os.ReadFile(out)
	if bytes.Contains(b, []byte("s3cret")) {
		t.Fatal("packed a file outside the root")
	}
	if snap, err := archive.Unpack(b, archive.UnpackOptions{}); err != nil || snap.Files["leak"] != nil {
		t.Fatalf("leak packed: %v", err)
	}
}

// TestPackDotIsRepeatable: "plugkit pack ." inside the plugin writes beside
// it, not into it, and packing again gives the same bytes; an explicit
// output inside the plugin is never packed itself.
func TestPackDotIsRepeatable(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "demo")
	os.Rename(clitest.WritePackPlugin(t, clitest.PackManifest), dir)
	t.Chdir(dir)
	var digests []string
	for range 2 {
		code, stdout, stderr := runCLI(t, "pack", ".")
		if code != 0 || !strings.Contains(stdout, "path:   ../demo-1.2.0.tar.gz\n") {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		b, err := os.ReadFile(filepath.Join(parent, "demo-1.2.0.tar.gz"))
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, archive.Digest(b))
	}
	if digests[0] != digests[1] {
		t.Errorf("pack . twice: %v", digests)
	}
	for range 2 {
		code, _, stderr := runCLI(t, "pack", ".", "-o", "dist/demo.tar.gz")
		if code == 2 && strings.Contains(stderr, "no such file") {
			os.Mkdir("dist", 0o755)
			continue
		}
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	}
	if code, _, _ := runCLI(t, "pack", ".", "-o", "dist/demo.tar.gz"); code != 0 {
		t.Fatal("third pack failed")
	}
	b, _ := os.ReadFile("dist/demo.tar.gz")
	snap, err := archive.Unpack(b, archive.UnpackOptions{})
	if err != nil || len(snap.Files) != 3 {
		t.Fatalf("packed %d files (%v), want the plugin's 3: %v", len(snap.Files), err, snap.Paths())
	}
	if archive.Digest(b) != digests[0] {
		t.Errorf("an output inside the plugin changed what is packed")
	}
}

// Errors name the user's path, never the temporary sibling pack writes
// through.
func TestPackErrorNamesUserPath(t *testing.T) {
	dir := clitest.WritePackPlugin(t, clitest.PackManifest)
	out := filepath.Join(t.TempDir(), "no-such-dir", "demo.tar.gz")
	code, _, stderr := runCLI(t, "pack", dir, "-o", out)
	if code != 2 || !strings.Contains(stderr, out) || strings.Contains(stderr, ".tmp-") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	code, stdout, _ := runCLI(t, "pack", dir, "-o", out, "--json")
	if doc := clitest.DecodeErrorDoc(t, stdout); code != 2 || doc.Error.Code != command.CodeIO || strings.Contains(doc.Error.Message, ".tmp-") {
		t.Errorf("exit %d, %+v", code, doc)
	}
}

func TestArchiveVerbsHaveHelpWithExamples(t *testing.T) {
	for _, verb := range []string{"pack", "unpack", "digest"} {
		code, stdout, _ := runCLI(t, verb, "--help")
		if code != 0 || !strings.Contains(stdout, "Examples:") || !strings.Contains(stdout, "plugkit "+verb+" ") {
			t.Errorf("%s --help: exit %d\n%s", verb, code, stdout)
		}
	}
}
