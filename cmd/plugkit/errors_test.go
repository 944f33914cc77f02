package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestUnknownSubcommandsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"nosuch"},
		{"mcp", "nosuch"},
		{"completion", "nosuch"},
		{"help", "nosuch"},
		{"validate", "--nosuch-flag", "."},
	} {
		code, out, errOut := plugkit(t, args...)
		if code != exitUsage {
			t.Errorf("plugkit %s: exit %d, want 2\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
		}
		if !strings.Contains(errOut, "plugkit:") {
			t.Errorf("plugkit %s: no error message on stderr: %q", strings.Join(args, " "), errOut)
		}
	}
}

func TestGroupsAndHelpStillWork(t *testing.T) {
	for _, args := range [][]string{{"mcp"}, {"help", "validate"}, {"help"}, {"validate", "--help"}, {"completion", "bash"}} {
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
		{[]string{"fetch", "--json", "demo", t.TempDir() + "/out"}, exitUsage, codeUsage}, // no --registry
		{[]string{"inspect", "--json", t.TempDir() + "/missing"}, exitUsage, codeIO},
	} {
		code, out, _ := plugkit(t, c.args...)
		if code != c.exit {
			t.Errorf("%v: exit %d, want %d", c.args, code, c.exit)
		}
		var doc errorDoc
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
	dir := writePlugin(t, map[string]string{"plugin.json": `{"name": "x"}`})
	code, out, _ := plugkit(t, "validate", "--json", dir)
	if code != exitFailed {
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
	code := runContext(ctx, []string{"catalog", "--json", "--registry", srv.URL}, &out, &errb)
	if code != exitInterrupted {
		t.Fatalf("exit %d, want 130\n%s%s", code, out.String(), errb.String())
	}
	var doc errorDoc
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.Error.Code != codeInterrupted {
		t.Fatalf("failure document %q (%v), want code %q", out.String(), err, codeInterrupted)
	}
}
