package root

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/snapshot"
)

func TestUnknownSubcommandsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"nosuch"},
		{"completion", "nosuch"},
		{"help", "nosuch"},
		{"validate", "--nosuch-flag", "."},
	} {
		code, out, errOut := plugkit(t, args...)
		if code != command.ExitUsage {
			t.Errorf("plugkit %s: exit %d, want 2\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
		}
		if !strings.Contains(errOut, "plugkit:") {
			t.Errorf("plugkit %s: no error message on stderr: %q", strings.Join(args, " "), errOut)
		}
	}
}

func TestGroupsAndHelpStillWork(t *testing.T) {
	for _, args := range [][]string{{"help", "validate"}, {"help"}, {"validate", "--help"}, {"completion", "bash"}} {
		if code, out, errOut := plugkit(t, args...); code != 0 || out == "" {
			t.Errorf("plugkit %s: exit %d, stdout %d bytes, stderr %q", strings.Join(args, " "), code, len(out), errOut)
		}
	}
}

// TestJSONFailureDocument: a --json verb that fails before printing its
// result prints the documented failure document instead of nothing.
func TestJSONFailureDocument(t *testing.T) {
	for _, c := range []struct {
		args []string
		exit int
		code string
	}{
		{[]string{"fetch", "--json", "demo", t.TempDir() + "/out"}, command.ExitUsage, command.CodeUsage}, // no --registry
		{[]string{"inspect", "--json", t.TempDir() + "/missing"}, command.ExitUsage, command.CodeIO},
	} {
		code, out, _ := plugkit(t, c.args...)
		if code != c.exit {
			t.Errorf("%v: exit %d, want %d", c.args, code, c.exit)
		}
		var doc command.ErrorDoc
		dec := json.NewDecoder(strings.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&doc); err != nil {
			t.Errorf("%v: stdout is not one failure document: %v\n%s", c.args, err, out)
			continue
		}
		if dec.More() {
			t.Errorf("%v: more than one JSON document on stdout:\n%s", c.args, out)
		}
		if doc.Error.Code != c.code || doc.Error.Message == "" || doc.Diagnostics == nil {
			t.Errorf("%v: failure document %+v, want code %q, a message and a diagnostics array", c.args, doc, c.code)
		}
	}
}

// TestJSONFailureDocumentOnce: a verb that printed its own document on
// failure gets no second one.
func TestJSONFailureDocumentOnce(t *testing.T) {
	dir := clitest.WritePlugin(t, map[string]string{"plugin.json": `{"name": "x"}`})
	code, out, _ := plugkit(t, "validate", "--json", dir)
	if code != command.ExitFailed {
		t.Fatalf("exit %d, want 1", code)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		t.Fatalf("want exactly one JSON document, got %v:\n%s", err, out)
	}
}

// TestInterruptedExit130: a verb whose context is cancelled (SIGINT and
// SIGTERM cancel it) exits 130 with the interrupted code.
func TestInterruptedExit130(t *testing.T) {
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	var out, errb bytes.Buffer
	code := Program().RunContext(ctx, factory.Quiet(&out, &errb), []string{"catalog", "--json", "--registry", srv.URL})
	if code != command.ExitInterrupted {
		t.Fatalf("exit %d, want 130\n%s%s", code, out.String(), errb.String())
	}
	var doc command.ErrorDoc
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.Error.Code != command.CodeInterrupted {
		t.Fatalf("failure document %q (%v), want code %q", out.String(), err, command.CodeInterrupted)
	}
}

// TestReleaseMismatchCode: a registry that answers a query for one plugin
// with another plugin's release is refused before anything is written,
// with the documented release-mismatch code. The registry lies, so it is a
// test server: a real one would not.
func TestReleaseMismatchCode(t *testing.T) {
	s, err := snapshot.FromFiles(map[string][]byte{"plugin.json": []byte(
		`{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "evil", "version": "6.6.6"}`)})
	if err != nil {
		t.Fatal(err)
	}
	body, err := archive.Pack(s, archive.PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := archive.Digest(body)
	rel := distribution.Release{ID: distribution.ReleaseID("evil", "6.6.6", d), PluginID: "evil", Version: "6.6.6", ArtifactDigest: d, Size: int64(len(body))}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case distribution.Prefix + "/resolve":
			json.NewEncoder(w).Encode(rel)
		case distribution.Prefix + "/artifacts/" + d:
			w.Write(body)
		default:
			http.NotFound(w, r)
		}
	}))
	defer ts.Close()
	dest := filepath.Join(t.TempDir(), "kv")
	for _, args := range [][]string{
		{"fetch", "kv", dest, "--registry", ts.URL, "--json"},
		{"resolve", "kv", "--registry", ts.URL, "--json"},
	} {
		code, out, errOut := plugkit(t, args...)
		if code != command.ExitFailed || clitest.ErrorCode(t, out) != command.CodeMismatch || !strings.Contains(errOut, `asked for plugin "kv", got "evil"`) {
			t.Errorf("plugkit %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Errorf("a refused fetch left %s: %v", dest, err)
	}
}

// TestEveryGroupRefusesUnknownSubcommands: any command that only groups
// others, now or added later, exits 2 on an unknown subcommand.
func TestEveryGroupRefusesUnknownSubcommands(t *testing.T) {
	root := Program().NewRootCmd(&factory.Factory{})
	var groups [][]string
	for _, c := range root.Commands() {
		if c.HasSubCommands() {
			groups = append(groups, []string{c.Name()})
		}
	}
	if len(groups) < 2 {
		t.Fatalf("found groups %v", groups)
	}
	for _, g := range groups {
		args := append(g, "nosuch")
		if code, out, errOut := plugkit(t, args...); code != command.ExitUsage || !strings.Contains(errOut, "unknown command") {
			t.Errorf("plugkit %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}
}

// TestSuggestionIndent: a mistyped verb's suggestions are indented by a
// tab, as cobra lays them out, not by a printed "\t" (TestPrintErrorTabs,
// package command, holds the escaping of other tabs).
func TestSuggestionIndent(t *testing.T) {
	code, out, errOut := plugkit(t, "valdate")
	want := "plugkit: unknown command \"valdate\" for \"plugkit\"\n\nDid you mean this?\n\tvalidate\n"
	if code != command.ExitUsage || out != "" || errOut != want {
		t.Errorf("plugkit valdate: exit %d, stderr %q, want %q", code, errOut, want)
	}
}
