package snapshot_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/internal/testtree"
	"github.com/plugkit/plugkit/snapshot"
)

// layout makes a plugin root inside a parent directory, so that links can
// point at a sibling "outside" directory.
func layout(t *testing.T, inside, outside map[string]string) string {
	t.Helper()
	parent := t.TempDir()
	root := filepath.Join(parent, "plugin")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	testtree.Write(t, filepath.Join(parent, "outside"), outside)
	testtree.Write(t, root, inside)
	return root
}

func omissions(s *snapshot.Snapshot) map[string]snapshot.Reason {
	m := map[string]snapshot.Reason{}
	for _, o := range s.Omitted {
		m[o.Path] = o.Reason
	}
	return m
}

// TestSpec4_1_LinksResolvedAgainstRoot covers section 4.1, rule 3: links
// may resolve inside the root (their bytes are kept under the link's own
// path) and paths resolving outside are never read.
func TestSpec4_1_LinksResolvedAgainstRoot(t *testing.T) {
	root := layout(t, map[string]string{
		"real/file.txt":     "inside",
		"alias.txt@":        "real/file.txt",
		"dirlink@":          "real",
		"chain1@":           "chain2",
		"chain2@":           "real/file.txt",
		"sub/up@":           "../real/file.txt",
		"escape.txt@":       "../outside/secret.txt",
		"escape-dir@":       "../outside",
		"abs-escape@":       "/etc/passwd",
		"broken@":           "real/missing",
		"through-file@":     "real/file.txt/x",
		"loop-a@":           "loop-b",
		"loop-b@":           "loop-a",
		"real/cycle@":       "..",
		"real/self@":        ".",
		"fifo|":             "",
		"back\\slash.txt":   "odd name",
		"empty-dir/":        "",
		"sub/deeper/empty/": "",
	}, map[string]string{"secret.txt": "secret"})
	s, err := snapshot.ReadDir(root, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := map[string]string{
		"real/file.txt":    "inside",
		"alias.txt":        "inside",
		"dirlink/file.txt": "inside",
		"chain1":           "inside",
		"chain2":           "inside",
		"sub/up":           "inside",
	}
	got := map[string]string{}
	for p, b := range s.Files {
		got[p] = string(b)
	}
	if !reflect.DeepEqual(got, wantFiles) {
		t.Errorf("files = %v, want %v", got, wantFiles)
	}
	wantOmitted := map[string]snapshot.Reason{
		"escape.txt":      snapshot.ReasonEscape,
		"escape-dir":      snapshot.ReasonEscape,
		"abs-escape":      snapshot.ReasonEscape,
		"broken":          snapshot.ReasonBroken,
		"through-file":    snapshot.ReasonBroken,
		"loop-a":          snapshot.ReasonCycle,
		"loop-b":          snapshot.ReasonCycle,
		"real/cycle":      snapshot.ReasonCycle,
		"real/self":       snapshot.ReasonCycle,
		"dirlink/cycle":   snapshot.ReasonCycle,
		"dirlink/self":    snapshot.ReasonCycle,
		"fifo":            snapshot.ReasonSpecial,
		"back\\slash.txt": snapshot.ReasonName,
	}
	if got := omissions(s); !reflect.DeepEqual(got, wantOmitted) {
		t.Errorf("omitted = %v, want %v", got, wantOmitted)
	}
	for p, b := range s.Files {
		if string(b) == "secret" {
			t.Errorf("%s holds bytes from outside the root", p)
		}
	}
}

// TestSpec4_1_AbsoluteLinkInsideRoot: an absolute link whose target is
// inside the resolved root is followed like a relative one.
func TestSpec4_1_AbsoluteLinkInsideRoot(t *testing.T) {
	root := layout(t, map[string]string{"a.txt": "a"}, nil)
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(real, "a.txt"), filepath.Join(root, "abs")); err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.ReadDir(root, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if string(s.Files["abs"]) != "a" || len(s.Omitted) != 0 {
		t.Errorf("files %v omitted %v", s.Files, s.Omitted)
	}
}

// TestSpec4_1_RootResolvedThroughLink: the plugin root itself is resolved
// first, so a root reached through a link reads the same.
func TestSpec4_1_RootResolvedThroughLink(t *testing.T) {
	root := layout(t, map[string]string{"plugin.json": "{}", "up@": "../plugin/plugin.json"}, nil)
	link := filepath.Join(t.TempDir(), "via-link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.ReadDir(link, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// "../plugin/plugin.json" leaves the root and comes back: lexically it
	// passes through the parent, so it is an escape even though it lands
	// inside. Reading never steps outside the root, even for a moment.
	if _, ok := s.Files["plugin.json"]; !ok {
		t.Errorf("plugin.json missing: %v", s.Files)
	}
	if got := omissions(s)["up"]; got != snapshot.ReasonEscape {
		t.Errorf("up: reason %q, want escape", got)
	}
}

func TestReadDirModes(t *testing.T) {
	root := layout(t, map[string]string{"run.sh": "#!/bin/sh\n", "data": "x"}, nil)
	if err := os.Chmod(filepath.Join(root, "run.sh"), 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.ReadDir(root, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m := s.Mode("run.sh"); m != 0o755 {
		t.Errorf("run.sh mode %v, want 0755 without setuid", m)
	}
	if m := s.Mode("data"); m != 0o644 {
		t.Errorf("data mode %v", m)
	}
}

func TestReadDirLimits(t *testing.T) {
	big := strings.Repeat("x", 100)
	cases := []struct {
		name   string
		limits snapshot.Limits
		files  map[string]string
		limit  string
	}{
		{"files", snapshot.Limits{MaxFiles: 2}, map[string]string{"a": "", "b": "", "c": ""}, "MaxFiles"},
		{"file bytes", snapshot.Limits{MaxFileBytes: 99}, map[string]string{"a": big}, "MaxFileBytes"},
		{"total bytes", snapshot.Limits{MaxTotalBytes: 150}, map[string]string{"a": big, "b": big}, "MaxTotalBytes"},
		{"depth", snapshot.Limits{MaxDepth: 2}, map[string]string{"a/b/c/d": ""}, "MaxDepth"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := layout(t, c.files, nil)
			_, err := snapshot.ReadDir(root, snapshot.Options{Limits: c.limits})
			var le *snapshot.LimitError
			if !errors.As(err, &le) || le.Limit != c.limit || !errors.Is(err, snapshot.ErrLimit) {
				t.Fatalf("err = %v, want limit %s", err, c.limit)
			}
			if !strings.Contains(err.Error(), c.limit) {
				t.Errorf("message %q does not name the limit", err)
			}
		})
	}
	t.Run("at the limit", func(t *testing.T) {
		root := layout(t, map[string]string{"a": big, "b/c": big}, nil)
		_, err := snapshot.ReadDir(root, snapshot.Options{Limits: snapshot.Limits{MaxFiles: 2, MaxFileBytes: 100, MaxTotalBytes: 200, MaxDepth: 1}})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// TestReadDirLinkBombBounded: links that multiply a directory are bounded
// by the file limit, not followed forever.
func TestReadDirLinkBombBounded(t *testing.T) {
	entries := map[string]string{"d0/f": "x"}
	for i := 1; i <= 12; i++ {
		prev := "../d" + string(rune('a'+i-1))
		if i == 1 {
			prev = "../d0"
		}
		name := "d" + string(rune('a'+i))
		entries[name+"/x@"] = prev
		entries[name+"/y@"] = prev
	}
	root := layout(t, entries, nil)
	_, err := snapshot.ReadDir(root, snapshot.Options{Limits: snapshot.Limits{MaxFiles: 1000}})
	if !errors.Is(err, snapshot.ErrLimit) {
		t.Fatalf("err = %v, want the file limit", err)
	}
}

func TestReadDirStrict(t *testing.T) {
	for name, entries := range map[string]map[string]string{
		"link":  {"a": "x", "b@": "a"},
		"fifo":  {"f|": ""},
		"names": {"a\\b": "x"},
	} {
		t.Run(name, func(t *testing.T) {
			root := layout(t, entries, nil)
			_, err := snapshot.ReadDir(root, snapshot.Options{Strict: true})
			if !errors.Is(err, snapshot.ErrNotRegular) {
				t.Fatalf("err = %v, want ErrNotRegular", err)
			}
		})
	}
	root := layout(t, map[string]string{"a/b": "x", "c": "y"}, nil)
	s, err := snapshot.ReadDir(root, snapshot.Options{Strict: true})
	if err != nil || len(s.Files) != 2 {
		t.Fatalf("strict read of plain files: %v %v", s, err)
	}
}

func TestReadDirNotADirectory(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := snapshot.ReadDir(f, snapshot.Options{}); err == nil {
		t.Error("ReadDir of a file succeeded")
	}
	if _, err := snapshot.ReadDir(filepath.Join(t.TempDir(), "missing"), snapshot.Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing dir: %v", err)
	}
}
