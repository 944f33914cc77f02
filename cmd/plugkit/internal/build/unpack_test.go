package build

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/snapshot"
)

// writeUnpackTestArchive packs a small snapshot (under root, when set) to
// a file and returns the file and the snapshot.
func writeUnpackTestArchive(t *testing.T, root string, trailer string) (string, *snapshot.Snapshot) {
	t.Helper()
	s, err := snapshot.New(map[string][]byte{
		"plugin.json":       []byte(clitest.PackManifest),
		"bin/tool":          []byte("#!/bin/sh\n"),
		"skills/a/SKILL.md": []byte("---\nname: a\ndescription: A.\n---\n"),
		"skills/a/ref/x.md": []byte("x"),
	}, map[string]fs.FileMode{"bin/tool": 0o755})
	if err != nil {
		t.Fatal(err)
	}
	b, err := archive.Pack(s, archive.PackOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "demo.tar.gz")
	os.WriteFile(file, append(b, trailer...), 0o644)
	return file, s
}

func TestUnpackWritesTree(t *testing.T) {
	file, s := writeUnpackTestArchive(t, "demo", "")
	dir := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI(t, "unpack", file, dir, "--root", "demo", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Digest, Path string
		Files        int
	}
	b, _ := os.ReadFile(file)
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Digest != archive.Digest(b) || res.Files != 4 || res.Path != dir {
		t.Fatalf("stdout %q (%v)", stdout, err)
	}
	got, err := snapshot.ReadDir(dir, snapshot.Options{Strict: true})
	if err != nil || !got.Equal(s) {
		t.Fatalf("tree %v (%v)", got, err)
	}
	if info, _ := os.Stat(filepath.Join(dir, "bin/tool")); info.Mode().Perm() != 0o755 {
		t.Errorf("bin/tool mode %v", info.Mode())
	}
	if info, _ := os.Stat(filepath.Join(dir, "plugin.json")); info.Mode().Perm() != 0o644 {
		t.Errorf("plugin.json mode %v", info.Mode())
	}
}

// An existing empty directory is filled; a non-empty one is refused and
// left alone.
func TestUnpackTargetDirectory(t *testing.T) {
	file, _ := writeUnpackTestArchive(t, "", "")
	empty := t.TempDir()
	if code, _, stderr := runCLI(t, "unpack", file, empty); code != 0 {
		t.Fatalf("empty directory: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(empty, "plugin.json")); err != nil {
		t.Fatal(err)
	}
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "keep"), []byte("mine"), 0o644)
	if code, _, stderr := runCLI(t, "unpack", file, full); code != 2 || !strings.Contains(stderr, "not empty") {
		t.Fatalf("non-empty directory: exit %d: %s", code, stderr)
	}
	if entries, _ := os.ReadDir(full); len(entries) != 1 {
		t.Errorf("non-empty directory changed: %v", entries)
	}
	// "." and ".." are refused before anything is read or written: the
	// rename would replace them.
	for _, dot := range []string{".", ".."} {
		if code, _, stderr := runCLI(t, "unpack", file, dot); code != 2 || !strings.Contains(stderr, "named from its parent") {
			t.Errorf("unpack into %q: exit %d: %s", dot, code, stderr)
		}
	}
	// Errors name the user's path, never the temporary sibling that
	// unpack writes through.
	orphan := filepath.Join(t.TempDir(), "no", "out")
	code, stdout, stderr := runCLI(t, "unpack", file, orphan, "--json")
	if code != 2 || clitest.ErrorCode(t, stdout) != command.CodeIO || !strings.Contains(stderr, filepath.Dir(orphan)+":") || strings.Contains(stderr, ".tmp-") {
		t.Errorf("missing parent: exit %d: %s", code, stderr)
	}
	// A directory where nothing can be created, even by root: the
	// temporary sibling cannot be made, and the error is about DIR.
	if runtime.GOOS == "linux" {
		code, _, stderr := runCLI(t, "unpack", file, "/proc/plugkit-out")
		if code != 2 || !strings.Contains(stderr, "/proc/plugkit-out:") || strings.Contains(stderr, ".tmp-") {
			t.Errorf("unwritable parent: exit %d: %s", code, stderr)
		}
	}
}

// A refused archive leaves nothing: no DIR, no temporary sibling.
func TestUnpackRefusedArchiveLeavesNothing(t *testing.T) {
	parent := t.TempDir()
	for name, args := range map[string][]string{
		"trailing data": {"--root", "demo"},
		"wrong root":    {"--root", "other"},
	} {
		trailer := ""
		if name == "trailing data" {
			trailer = "x"
		}
		file, _ := writeUnpackTestArchive(t, "demo", trailer)
		dir := filepath.Join(parent, "out")
		code, _, stderr := runCLI(t, append([]string{"unpack", file, dir}, args...)...)
		if code != 1 {
			t.Errorf("%s: exit %d: %s", name, code, stderr)
		}
		if entries, _ := os.ReadDir(parent); len(entries) != 0 {
			t.Errorf("%s: left behind %v", name, entries)
		}
	}
	if code, _, _ := runCLI(t, "unpack", filepath.Join(parent, "missing.tgz"), filepath.Join(parent, "out")); code != 2 {
		t.Errorf("missing archive: exit %d", code)
	}
}

// writeTarGz writes a gzip-compressed USTAR archive of the given headers,
// in that order, each regular file with its name as its bytes, and
// returns its path.
func writeTarGz(t *testing.T, headers ...*tar.Header) string {
	t.Helper()
	var raw bytes.Buffer
	gz := gzip.NewWriter(&raw)
	tw := tar.NewWriter(gz)
	for _, h := range headers {
		h.Format = tar.FormatUSTAR
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(h.Name))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(h.Name))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	gz.Close()
	file := filepath.Join(t.TempDir(), "foreign.tar.gz")
	if err := os.WriteFile(file, raw.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// Unpack writes files while it still reads the archive. A refusal that
// comes only at the last entry, after every other file was written (a
// late file/directory conflict of an unsorted archive, a limit, a link),
// still exits 1 with the archive's error and leaves nothing: no DIR, no
// temporary sibling.
func TestUnpackRefusalAtTheLastEntryLeavesNothing(t *testing.T) {
	var files []*tar.Header
	for i := range 200 {
		files = append(files, &tar.Header{Name: fmt.Sprintf("lib/d%d/f%03d", i%5, i), Typeflag: tar.TypeReg, Mode: 0o644})
	}
	files = append(files, &tar.Header{Name: "plugin.json", Typeflag: tar.TypeReg, Mode: 0o644})
	deep := strings.Repeat("a/", archive.DefaultMaxDepth+1) + "f"
	for name, c := range map[string]struct {
		last *tar.Header
		want string
	}{
		"file on a written directory":    {&tar.Header{Name: "lib/d3", Typeflag: tar.TypeReg, Mode: 0o644}, "both a file and a directory"},
		"directory below a written file": {&tar.Header{Name: "plugin.json/x", Typeflag: tar.TypeReg, Mode: 0o644}, "both a file and a directory"},
		"duplicate of a written file":    {&tar.Header{Name: "lib/d0/f000", Typeflag: tar.TypeReg, Mode: 0o644}, "duplicate path"},
		"depth limit":                    {&tar.Header{Name: deep, Typeflag: tar.TypeReg, Mode: 0o644}, "MaxDepth"},
		"symbolic link":                  {&tar.Header{Name: "z", Typeflag: tar.TypeSymlink, Linkname: "/"}, "symbolic link"},
	} {
		t.Run(name, func(t *testing.T) {
			file := writeTarGz(t, append(slices.Clone(files), c.last)...)
			parent := t.TempDir()
			code, stdout, stderr := runCLI(t, "unpack", file, filepath.Join(parent, "out"), "--json")
			if code != 1 || clitest.ErrorCode(t, stdout) == command.CodeIO || !strings.Contains(stdout, c.want) {
				t.Errorf("exit %d, want 1 and %q: %s %s", code, c.want, stdout, stderr)
			}
			if entries, _ := os.ReadDir(parent); len(entries) != 0 {
				t.Errorf("left behind: %v", entries)
			}
		})
	}
}
