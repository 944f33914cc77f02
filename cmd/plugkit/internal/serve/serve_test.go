package serve

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/registry/storage"
)

// TestServeFlags: one default in --help
// for --anonymous-read, and a busy port leaves no data directory behind.
func TestServeFlags(t *testing.T) {
	code, out, _ := runCLI(t, "serve", "--help")
	if code != 0 || !strings.Contains(out, "PLUGKIT_ADMIN_TOKENS") || !strings.Contains(out, "Examples:") {
		t.Fatalf("serve --help: exit %d %q", code, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Count(line, "(default") > 1 {
			t.Errorf("two defaults: %q", line)
		}
	}
	if code, _, _ := runCLI(t, "serve", "--tls-cert", "x"); code != 2 {
		t.Fatalf("--tls-cert without --tls-key: exit %d", code)
	}
	if code, _, errs := runCLI(t, "serve", "--max-uploads", "0"); code != 2 || !strings.Contains(errs, "--max-uploads must be positive") {
		t.Fatalf("--max-uploads 0: exit %d %s", code, errs)
	}
	// Limits whose largest catalog entry no client could read are refused
	// before anything is created.
	data := filepath.Join(t.TempDir(), "data")
	if code, _, errs := runCLI(t, "serve", "--data", data, "--addr", "127.0.0.1:0", "--max-description", "65536"); code != 2 ||
		!strings.Contains(errs, "65536 bytes of description and 1000 releases per plugin") {
		t.Fatalf("--max-description 65536: exit %d %s", code, errs)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("refused limits created %s: %v", data, err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	if code, _, _ := runCLI(t, "serve", "--addr", busy.Addr().String(), "--data", data); code != 2 {
		t.Fatalf("serve on a busy port: exit %d", code)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("serve on a busy port created %s: %v", data, err)
	}
}

func TestServeGC(t *testing.T) {
	data := t.TempDir()
	db, blobs, err := storage.OpenDir(data)
	if err != nil {
		t.Fatal(err)
	}
	orphan := []byte("an archive whose publish crashed")
	if err := blobs.Put(t.Context(), archive.Digest(orphan), orphan); err != nil {
		t.Fatal(err)
	}
	db.Close()
	code, out, _ := runCLI(t, "serve", "gc", "--data", data, "--grace", "1ns", "--dry-run")
	if code != 0 || !strings.Contains(out, "would remove "+archive.Digest(orphan)) {
		t.Fatalf("gc --dry-run: exit %d %q", code, out)
	}
	code, out, _ = runCLI(t, "serve", "gc", "--data", data, "--grace", "1ns", "--json")
	var res gcResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Orphans) != 1 || res.DryRun {
		t.Fatalf("gc --json: exit %d %s", code, out)
	}
	if code, out, _ := runCLI(t, "serve", "gc", "--data", data); code != 0 || !strings.Contains(out, "removed 0 orphan blobs") {
		t.Fatalf("gc again: exit %d %q", code, out)
	}
	if code, _, _ := runCLI(t, "serve", "gc", "--data", filepath.Join(t.TempDir(), "none")); code != 2 {
		t.Fatalf("gc of a missing directory: exit %d", code)
	}
	if code, _, _ := runCLI(t, "serve", "nosuch"); code != 2 {
		t.Fatalf("serve nosuch: exit %d", code)
	}
}
