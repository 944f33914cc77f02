package archive_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/snapshot"
)

// gnuTar returns the path of GNU tar, or skips the test.
func gnuTar(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("tar")
	if err != nil {
		t.Skip("tar not installed")
	}
	out, err := exec.Command(p, "--version").Output()
	if err != nil || !bytes.Contains(out, []byte("GNU tar")) {
		t.Skip("tar is not GNU tar")
	}
	return p
}

func tarCmd(t *testing.T, tar string, args ...string) string {
	t.Helper()
	cmd := exec.Command(tar, args...)
	cmd.Env = append(os.Environ(), "TZ=UTC", "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tar %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func demoSnapshot(t *testing.T) *snapshot.Snapshot {
	t.Helper()
	s, err := snapshot.New(map[string][]byte{
		"plugin.json":           []byte(`{"$schema":"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json","name":"demo"}`),
		"skills/greet/SKILL.md": []byte("---\nname: greet\ndescription: Greets.\n---\nSay hello.\n"),
		"bin/server":            []byte("#!/bin/sh\nexec cat\n"),
		"assets/big.txt":        bytes.Repeat([]byte("several chunks of text for parallel deflate\n"), 20_000),
		strings.Repeat("p", 120) + "/" + strings.Repeat("n", 90): []byte("long path through the prefix field"),
	}, map[string]fs.FileMode{"bin/server": 0o755})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// GNU tar lists our archives with owner 0/0, the epoch and the right modes,
// and extracts them to the same files.
func TestGNUTarReadsOurArchives(t *testing.T) {
	tar := gnuTar(t)
	s := demoSnapshot(t)
	b, err := archive.Pack(s, archive.PackOptions{Root: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "demo.tar.gz")
	os.WriteFile(file, b, 0o644)

	lines := strings.Split(strings.TrimSpace(tarCmd(t, tar, "-tvzf", file)), "\n")
	if len(lines) != len(s.Files) {
		t.Fatalf("tar lists %d entries:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for i, p := range s.Paths() {
		f := strings.Fields(lines[i])
		wantMode := "-rw-r--r--"
		if p == "bin/server" {
			wantMode = "-rwxr-xr-x"
		}
		if f[0] != wantMode || f[1] != "0/0" || f[3] != "1970-01-01" || f[4] != "00:00" || f[5] != "demo/"+p {
			t.Errorf("tar -tv line %q, want %s 0/0 1970-01-01 00:00 demo/%s", lines[i], wantMode, p)
		}
	}

	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	tarCmd(t, tar, "-xzf", file, "-C", out)
	got, err := snapshot.ReadDir(filepath.Join(out, "demo"), snapshot.Options{Strict: true})
	if err != nil || !got.Equal(s) {
		t.Fatalf("tar -xzf extracted %v (%v), want %v", got.Paths(), err, s.Paths())
	}
}

// A plugin archived by GNU tar in USTAR format (directory entries
// included) unpacks to the same snapshot; GNU and PAX formats are refused,
// and the GNU format (what Colossus writes) is read with the GNUMagic
// switch of the OCI layer reader.
func TestUnpackReadsGNUTarUSTAR(t *testing.T) {
	tar := gnuTar(t)
	s := demoSnapshot(t)
	for p := range s.Files { // GNU tar cannot split the directory of the long path
		if len(p) > 100 {
			delete(s.Files, p)
			delete(s.Modes, p)
		}
	}
	dir := t.TempDir()
	for _, p := range s.Paths() {
		full := filepath.Join(dir, "demo", filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, s.Files[p], s.Mode(p)); err != nil {
			t.Fatal(err)
		}
		os.Chmod(full, s.Mode(p))
	}
	os.Mkdir(filepath.Join(dir, "demo", "empty"), 0o755)

	for _, c := range []struct {
		format string
		gnu    bool
		want   error
	}{
		{"ustar", false, nil}, {"gnu", false, archive.ErrMagic}, {"posix", false, archive.ErrPAX},
		{"ustar", true, nil}, {"gnu", true, nil}, {"posix", true, archive.ErrPAX},
	} {
		format, want := c.format, c.want
		file := filepath.Join(dir, format+".tar.gz")
		tarCmd(t, tar, "--format="+format, "-czf", file, "-C", dir, "demo")
		b, _ := os.ReadFile(file)
		got, err := archive.Unpack(b, archive.UnpackOptions{Root: "demo", GNUMagic: c.gnu})
		if want != nil {
			if !errors.Is(err, want) {
				t.Errorf("--format=%s: err = %v, want %v", format, err, want)
			}
			continue
		}
		if err != nil || !got.Equal(s) {
			t.Fatalf("--format=%s (GNUMagic %v): %v (%v), want %v", format, c.gnu, got, err, s.Paths())
		}
	}
}
