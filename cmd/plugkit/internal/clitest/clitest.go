// Package clitest holds the helpers of the tests of plugkit's command
// packages, which run the command tree in process. It imports none of
// the verb packages, whose tests use it: a test passes the function that
// runs plugkit.
package clitest

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
)

// ExamplePlugin is the example plugin of the repository.
func ExamplePlugin() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "examples", "release-notes")
}

// RunFunc runs plugkit in process with args and returns its exit code.
type RunFunc func(args []string, stdout, stderr io.Writer) int

// Run runs plugkit with args through run and returns its exit code and
// output.
func Run(t testing.TB, run RunFunc, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// MustRun runs plugkit and fails the test unless it exits 0.
func MustRun(t testing.TB, run RunFunc, args ...string) string {
	t.Helper()
	code, stdout, stderr := Run(t, run, args...)
	if code != 0 {
		t.Fatalf("plugkit %v: exit %d\n%s%s", args, code, stdout, stderr)
	}
	return stdout
}

// WritePlugin writes files (path → content) into a new directory.
func WritePlugin(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// DecodeOne decodes stdout as exactly one JSON document.
func DecodeOne(t testing.TB, stdout string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(v); err != nil || dec.More() {
		t.Fatalf("stdout is not one JSON document: %q (%v)", stdout, err)
	}
}

// OCIEnv points the Docker config at an empty directory and returns it.
func OCIEnv(t testing.TB) string {
	dir := t.TempDir()
	t.Setenv("DOCKER_CONFIG", dir)
	t.Setenv("SOURCE_DATE_EPOCH", "")
	return dir
}

// PackManifest is the plugin.json of the plugin WritePackPlugin writes
// in most tests: "demo" 1.2.0.
const PackManifest = `{"$schema":"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json","name":"demo","version":"1.2.0"}`

// WritePackPlugin writes a small valid plugin (with an executable) into
// a new directory and returns it.
func WritePackPlugin(t testing.TB, manifest string) string {
	t.Helper()
	dir := WritePlugin(t, map[string]string{
		"plugin.json":           manifest,
		"skills/greet/SKILL.md": "---\nname: greet\ndescription: Greets people.\n---\nSay hello.\n",
		"bin/tool":              "#!/bin/sh\necho hi\n",
	})
	if err := os.Chmod(filepath.Join(dir, "bin/tool"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ErrorCode returns the error code of the --json failure document that
// stdout must be.
func ErrorCode(t testing.TB, stdout string) string {
	t.Helper()
	var doc struct {
		Error struct{ Code string }
	}
	DecodeOne(t, stdout, &doc)
	return doc.Error.Code
}

// DecodeErrorDoc decodes stdout as exactly one failure document.
func DecodeErrorDoc(t *testing.T, stdout string) command.ErrorDoc {
	t.Helper()
	var doc command.ErrorDoc
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil || dec.More() {
		t.Fatalf("stdout is not one failure document (%v):\n%s", err, stdout)
	}
	return doc
}
