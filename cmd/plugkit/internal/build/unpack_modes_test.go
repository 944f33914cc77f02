//go:build unix

package build

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestUnpackNeverWritesWritableFiles, through the CLI:
// an archive whose entries say 0777 and 0666 (plugkit pack never writes
// them, but a registry or a stranger may serve them) is unpacked, even
// under umask 077 or 000, into files of 0755 and 0644 that no other user
// can replace.
func TestUnpackNeverWritesWritableFiles(t *testing.T) {
	var raw bytes.Buffer
	gz := gzip.NewWriter(&raw)
	tw := tar.NewWriter(gz)
	for _, e := range []struct {
		name string
		mode int64
		body string
	}{
		{"bin/", 0o777, ""},
		{"bin/server", 0o777, "#!/bin/sh\n"},
		{"plugin.json", 0o666, `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "demo"}`},
	} {
		h := &tar.Header{Name: e.name, Mode: e.mode, Size: int64(len(e.body)), Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
		if e.body == "" {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(e.body))
	}
	tw.Close()
	gz.Close()
	file := filepath.Join(t.TempDir(), "demo.tar.gz")
	if err := os.WriteFile(file, raw.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, umask := range []int{0o077, 0} {
		dir := filepath.Join(t.TempDir(), "demo")
		old := syscall.Umask(umask)
		code, _, stderr := runCLI(t, "unpack", file, dir)
		syscall.Umask(old)
		if code != 0 {
			t.Fatalf("umask %03o: exit %d: %s", umask, code, stderr)
		}
		for p, want := range map[string]os.FileMode{"bin/server": 0o755, "plugin.json": 0o644, "bin": 0o755, ".": 0o755} {
			fi, err := os.Stat(filepath.Join(dir, p))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != want {
				t.Errorf("umask %03o: %s is %v, want %v", umask, p, fi.Mode().Perm(), want)
			}
		}
	}
}
