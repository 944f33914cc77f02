package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/snapshot"
)

const packTestManifest = `{"$schema":"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json","name":"demo","version":"1.2.0"}`

// writePackTestPlugin writes a small valid plugin (with an executable) into
// a new directory and returns it.
func writePackTestPlugin(t *testing.T, manifest string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"plugin.json":           manifest,
		"skills/greet/SKILL.md": "---\nname: greet\ndescription: Greets people.\n---\nSay hello.\n",
		"bin/tool":              "#!/bin/sh\necho hi\n",
	}
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(dir, "bin/tool"), 0o755)
	return dir
}

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestPackWritesValidatedArchive(t *testing.T) {
	dir := writePackTestPlugin(t, packTestManifest)
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
	a := writePackTestPlugin(t, packTestManifest)
	b := writePackTestPlugin(t, packTestManifest)
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
	dir := writePackTestPlugin(t, packTestManifest)
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
// diagnostics on stderr (or in the JSON document), the output untouched.
func TestPackRefusesRejectedPlugin(t *testing.T) {
	dir := writePackTestPlugin(t, `{"$schema":"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json","name":"Not A Valid Name"}`)
	outDir := t.TempDir()
	out := filepath.Join(outDir, "demo.tar.gz")
	os.WriteFile(out, []byte("previous"), 0o644)

	code, stdout, stderr := runCLI(t, "pack", dir, "-o", out)
	if code != 1 || !strings.Contains(stderr, "plugin.json") || !strings.Contains(stderr, "error[") || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, "pack", dir, "-o", out, "--json")
	var res struct {
		Error       string
		Diagnostics []struct{ Severity, Code string }
	}
	if err := json.Unmarshal([]byte(stdout), &res); code != 1 || err != nil || res.Error == "" || len(res.Diagnostics) == 0 {
		t.Fatalf("exit %d, stdout %q (%v)", code, stdout, err)
	}
	if b, _ := os.ReadFile(out); string(b) != "previous" {
		t.Errorf("output overwritten: %q", b)
	}
	if entries, _ := os.ReadDir(outDir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

// Packing reads strictly: a symbolic link is an error (exit 1), a missing
// directory a usage error (exit 2).
func TestPackReadsStrictly(t *testing.T) {
	dir := writePackTestPlugin(t, packTestManifest)
	os.Symlink("plugin.json", filepath.Join(dir, "alias.json"))
	out := filepath.Join(t.TempDir(), "x.tar.gz")
	if code, _, stderr := runCLI(t, "pack", dir, "-o", out); code != 1 || !strings.Contains(stderr, "alias.json") {
		t.Errorf("symlink: exit %d, %q", code, stderr)
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

func TestArchiveVerbsHaveHelpWithExamples(t *testing.T) {
	for _, verb := range []string{"pack", "unpack", "digest"} {
		code, stdout, _ := runCLI(t, verb, "--help")
		if code != 0 || !strings.Contains(stdout, "Examples:") || !strings.Contains(stdout, "plugkit "+verb+" ") {
			t.Errorf("%s --help: exit %d\n%s", verb, code, stdout)
		}
	}
}
