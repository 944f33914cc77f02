package skill

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/plugkit/plugkit/internal/testtree"
	"github.com/plugkit/plugkit/snapshot"
)

// writeTree creates files (path → content) under a new directory named
// name and returns its path.
func writeTree(t *testing.T, name string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	testtree.Write(t, dir, files)
	return dir
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
}

func TestLoadDir(t *testing.T) {
	dir := writeTree(t, "deploy", map[string]string{
		"SKILL.md":              doc("name: deploy", "description: Deploys."),
		"scripts/rollback.sh":   "#!/bin/sh\n",
		"references/runbook.md": "# Runbook\n",
	})
	s, problems, err := LoadDir(dir, Options{})
	if err != nil || s == nil || len(problems) != 0 {
		t.Fatalf("LoadDir = %v, %v, %v", s, problems, err)
	}
	want := map[string][]byte{"scripts/rollback.sh": []byte("#!/bin/sh\n"), "references/runbook.md": []byte("# Runbook\n")}
	if !reflect.DeepEqual(s.Files, want) {
		t.Errorf("Files = %q", s.Files)
	}
	equal(t, s.Name, "deploy")
}

func TestSpec71_NameMatchesDirectory_LoadDir(t *testing.T) {
	dir := writeTree(t, "deploy", map[string]string{"SKILL.md": doc("name: other", "description: d")})
	s, problems, err := LoadDir(dir, Options{})
	if err != nil || s != nil {
		t.Fatalf("LoadDir = %v, %v", s, err)
	}
	equal(t, describe(wantsOf(problems)), describe([]want{errAt("skill-name-mismatch", "/name", 2, 7)}))
	// A relative path and a trailing separator still name the directory.
	t.Chdir(dir)
	if s, problems, err := LoadDir("./", Options{}); s != nil || err != nil || len(problems) != 1 {
		t.Errorf("LoadDir(./) = %v, %v, %v", s, problems, err)
	}
}

func TestLoadDirNoSkillFile(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"missing":        {"README.md": "x"},
		"wrong case":     {"skill.md": doc("name: x", "description: d")},
		"only in subdir": {"sub/SKILL.md": doc("name: x", "description: d")},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := LoadDir(writeTree(t, "x", files), Options{})
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("err = %v, want fs.ErrNotExist", err)
			}
		})
	}
	if _, _, err := LoadDir(filepath.Join(t.TempDir(), "absent"), Options{}); err == nil {
		t.Error("no error for a missing directory")
	}
}

func TestSpec41_LinksInSkillDir(t *testing.T) {
	outside := writeTree(t, "outside", map[string]string{"secret": "s3cret", "SKILL.md": doc("name: demo", "description: d")})
	dir := writeTree(t, "demo", map[string]string{"SKILL.md": doc("name: demo", "description: d"), "real.md": "real", "sub/x": "x"})
	symlink(t, "real.md", filepath.Join(dir, "inside.md"))
	symlink(t, filepath.Join(outside, "secret"), filepath.Join(dir, "escape"))
	rel, err := filepath.Rel(filepath.Join(dir, "sub"), filepath.Join(outside, "secret"))
	if err != nil {
		t.Fatal(err)
	}
	symlink(t, rel, filepath.Join(dir, "sub", "relative-escape"))
	symlink(t, "sub", filepath.Join(dir, "dirlink"))
	symlink(t, "nowhere", filepath.Join(dir, "dangling"))
	testtree.Mkfifo(t, filepath.Join(dir, "fifo"))
	s, problems, err := LoadDir(dir, Options{})
	if err != nil || s == nil {
		t.Fatalf("LoadDir = %v, %v, %v", s, problems, err)
	}
	if got := string(s.Files["inside.md"]); got != "real" {
		t.Errorf("inside link read as %q", got)
	}
	if got := string(s.Files["dirlink/x"]); got != "x" {
		t.Errorf("a link to a directory inside is followed: got %q", got)
	}
	for _, p := range []string{"escape", "sub/relative-escape", "dangling", "fifo"} {
		if _, ok := s.Files[p]; ok {
			t.Errorf("%s was read", p)
		}
	}
	got := map[string]string{}
	for _, p := range problems {
		if p.Severity != Warning {
			t.Errorf("%s: severity %s", p.File, p.Severity)
		}
		got[p.File] = p.Code
	}
	want := map[string]string{"escape": "skill-link-escapes", "sub/relative-escape": "skill-link-escapes", "dirlink/relative-escape": "skill-link-escapes",
		"dangling": "skill-file-skipped", "fifo": "skill-file-skipped"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems = %v, want %v", got, want)
	}
}

func TestSpec41_SkillFileLinkEscapes(t *testing.T) {
	outside := writeTree(t, "outside", map[string]string{"SKILL.md": doc("name: demo", "description: d")})
	dir := writeTree(t, "demo", nil)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, filepath.Join(outside, "SKILL.md"), filepath.Join(dir, "SKILL.md"))
	s, problems, err := LoadDir(dir, Options{})
	if err != nil || s != nil {
		t.Fatalf("LoadDir = %v, %v", s, err)
	}
	equal(t, describe(wantsOf(problems)), describe([]want{errAt("skill-link-escapes", "", 0, 0)}))
}

func TestLoadDirLimit(t *testing.T) {
	dir := writeTree(t, "demo", map[string]string{"SKILL.md": doc("name: demo", "description: d")})
	f, err := os.Create(filepath.Join(dir, "big"))
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: the limit must hold without writing 16 MiB.
	if err := f.Truncate(snapshot.DefaultMaxFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, _, err := LoadDir(dir, Options{}); !errors.Is(err, ErrLimit) {
		t.Errorf("err = %v, want ErrLimit", err)
	}
}

func TestLoadDirInvalidSkill(t *testing.T) {
	dir := writeTree(t, "demo", map[string]string{"SKILL.md": "no frontmatter", "a": "b"})
	s, problems, err := LoadDir(dir, Options{})
	if err != nil || s != nil || len(problems) != 1 || problems[0].Code != "skill-frontmatter-missing" {
		t.Errorf("LoadDir = %v, %v, %v", s, problems, err)
	}
}

// describe renders problems for a readable comparison.
func describe(ws []want) string {
	var s string
	for _, w := range ws {
		s += w.String() + ";"
	}
	return s
}
