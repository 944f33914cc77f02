package snapshot_test

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"testing"

	"github.com/plugkit/plugkit/snapshot"
)

func TestCheckPath(t *testing.T) {
	valid := []string{"a", "plugin.json", "skills/x/SKILL.md", "a b/c", ".hidden", "a..b", "...", "é/ü"}
	invalid := []string{"", "/abs", "a//b", "a/", "./a", "a/./b", "..", "a/../b", "a\\b", "C:\\x", "a\x00b", "."}
	for _, p := range valid {
		if err := snapshot.CheckPath(p); err != nil {
			t.Errorf("CheckPath(%q) = %v", p, err)
		}
	}
	for _, p := range invalid {
		if err := snapshot.CheckPath(p); !errors.Is(err, snapshot.ErrInvalidPath) {
			t.Errorf("CheckPath(%q) = %v, want ErrInvalidPath", p, err)
		}
	}
}

func TestFromFiles(t *testing.T) {
	s, err := snapshot.FromFiles(map[string][]byte{"b": []byte("2"), "a/c": []byte("1")})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Paths(); !reflect.DeepEqual(got, []string{"a/c", "b"}) {
		t.Errorf("Paths = %v", got)
	}
	ix := s.Index()
	if s.Mode("b") != snapshot.DefaultMode || ix.Kind("a") != snapshot.Dir || ix.Kind("b") != snapshot.File || ix.Kind("z") != snapshot.Absent || ix.Kind("a/c/d") != snapshot.Absent {
		t.Error("modes or kinds wrong")
	}
	for _, files := range []map[string][]byte{
		{"../x": nil},
		{"a": nil, "a/b": nil},
		{"a/b": nil, "a/b/c": nil},
		{"x/": nil},
	} {
		if _, err := snapshot.FromFiles(files); !errors.Is(err, snapshot.ErrInvalidPath) {
			t.Errorf("FromFiles(%v) = %v, want ErrInvalidPath", files, err)
		}
	}
	// "a-b" and "a.b" sort between "a" and "a/"; the conflict check must
	// look past them.
	if _, err := snapshot.FromFiles(map[string][]byte{"a": nil, "a-b": nil, "a.b": nil, "a/c": nil}); err == nil {
		t.Error("file/directory conflict behind siblings not found")
	}
	if _, err := snapshot.FromFiles(map[string][]byte{"a-b": nil, "a.b": nil, "a/c": nil}); err != nil {
		t.Errorf("no conflict, got %v", err)
	}
}

func TestNewModes(t *testing.T) {
	s, err := snapshot.New(map[string][]byte{"run": nil}, map[string]fs.FileMode{"run": 0o4755})
	if err != nil {
		t.Fatal(err)
	}
	if s.Mode("run") != 0o755 {
		t.Errorf("mode %v: setuid must be dropped", s.Mode("run"))
	}
	if _, err := snapshot.New(map[string][]byte{"a": nil}, map[string]fs.FileMode{"b": 0o755}); err == nil {
		t.Error("a mode for a missing file was accepted")
	}
}

func TestIndexAndEqual(t *testing.T) {
	s, _ := snapshot.FromFiles(map[string][]byte{"a/b/c": []byte("x"), "a/d": nil, "e": nil, "a-b": nil, "a.c/x": nil, "a/b.x": nil, "a/b/e": nil})
	ix := s.Index()
	for dir, want := range map[string][]string{"": {"a", "a-b", "a.c", "e"}, "a": {"b", "b.x", "d"}, "a/b": {"c", "e"}, "e": nil, "z": nil} {
		if got := ix.Children(dir); !reflect.DeepEqual(got, want) {
			t.Errorf("Children(%q) = %v, want %v", dir, got, want)
		}
	}
	u, _ := snapshot.FromFiles(map[string][]byte{"a/b/c": []byte("x"), "a/d": nil, "e": nil, "a-b": nil, "a.c/x": nil, "a/b.x": nil, "a/b/e": nil})
	if !s.Equal(u) || s.Size() != 1 {
		t.Error("Equal or Size wrong")
	}
	u.Modes["e"] = 0o755
	if s.Equal(u) {
		t.Error("modes not compared")
	}
}

func FuzzCheckPath(f *testing.F) {
	for _, p := range []string{"a", "a/b", "../a", "a//b", "/a", "a\\b", "a/./b", "\x00"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := snapshot.CheckPath(p)
		s, ferr := snapshot.FromFiles(map[string][]byte{p: nil})
		if (err == nil) != (ferr == nil) {
			t.Fatalf("CheckPath and FromFiles disagree on %q: %v / %v", p, err, ferr)
		}
		if err == nil && (s.Index().Kind(p) != snapshot.File) {
			t.Fatalf("valid path %q not a file", p)
		}
	})
}

func ExampleReadDir() {
	// A plugin directory becomes data: files, modes, and what was not read.
	s, err := snapshot.ReadDir("../examples/release-notes", snapshot.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(s.Omitted), s.Mode("bin/git-log-server"))
	// Output: 0 -rwxr-xr-x
}
