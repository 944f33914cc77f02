package snapshot_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/plugkit/plugkit/internal/hostile"
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
		{"entries", snapshot.Limits{MaxEntries: 3}, map[string]string{"a/b": "", "c/": "", "d": ""}, "MaxEntries"},
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
		_, err := snapshot.ReadDir(root, snapshot.Options{Limits: snapshot.Limits{MaxFiles: 2, MaxEntries: 3, MaxFileBytes: 100, MaxTotalBytes: 200, MaxDepth: 1}})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// linkFanOut lays out levels directories, each holding two links to the
// next ("d1/a -> ../d2", "d1/b -> ../d2", …), the last one holding bottom:
// read naively, the tree has 2^levels paths.
func linkFanOut(t *testing.T, levels int, bottom map[string]string) string {
	entries := map[string]string{}
	for i := 1; i < levels; i++ {
		next := fmt.Sprintf("../d%d", i+1)
		entries[fmt.Sprintf("d%d/a@", i)] = next
		entries[fmt.Sprintf("d%d/b@", i)] = next
	}
	for name, v := range bottom {
		entries[fmt.Sprintf("d%d/%s", levels, name)] = v
	}
	return layout(t, entries, nil)
}

// TestReadDirLinkFanOutBounded: two in-root links per
// level to the next level made ReadDir visit 2^N directories (16 levels:
// 20 s; 30: unbounded). Every directory visited through a link counts
// against the entry budget (and its files against the file budget), so
// the walk stops at the limit, in time the limit bounds.
func TestReadDirLinkFanOutBounded(t *testing.T) {
	for _, c := range []struct {
		name   string
		levels int
		bottom map[string]string
		limits snapshot.Limits
		limit  string
	}{
		{"30 levels, empty", 30, nil, snapshot.Limits{}, "MaxEntries"},
		{"30 levels, a file at the bottom", 30, map[string]string{"f": "x"}, snapshot.Limits{}, "MaxEntries"},
		{"files first", 30, map[string]string{"f": "x", "g": "y"}, snapshot.Limits{MaxFiles: 100}, "MaxFiles"},
		{"entries", 30, nil, snapshot.Limits{MaxEntries: 500}, "MaxEntries"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := linkFanOut(t, c.levels, c.bottom)
			start := time.Now()
			_, err := snapshot.ReadDir(root, snapshot.Options{Limits: c.limits})
			var le *snapshot.LimitError
			if !errors.As(err, &le) || le.Limit != c.limit {
				t.Fatalf("err = %v, want limit %s", err, c.limit)
			}
			// 20,000 entries cost well under a second; the 2^30 walk never
			// ended.
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
	// Within the budget, every path through the links is read.
	root := linkFanOut(t, 5, map[string]string{"f": "x"})
	s, err := snapshot.ReadDir(root, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.Files); n != 1+2+4+8+16 {
		t.Errorf("%d files, want 31 (every path to d5/f)", n)
	}
}

// TestReadDirLinkFanOutCostLinear: on the 30-level fan-out, which has far
// more paths than any limit allows, what ReadDir spends before it refuses
// grows linearly with the limit it is given (MaxEntries and MaxFiles from
// 1,250 to 20,000, the default), in CPU time and allocations
// (hostile.Linear) and in peak heap (runtime/metrics): the walk is bounded
// by the limits, never by the 2^30 paths.
func TestReadDirLinkFanOutCostLinear(t *testing.T) {
	root := linkFanOut(t, 30, map[string]string{"f": strings.Repeat("x", 512)})
	read := func(limit int) func() {
		return func() {
			_, err := snapshot.ReadDir(root, snapshot.Options{Limits: snapshot.Limits{MaxEntries: limit, MaxFiles: limit}})
			if !errors.Is(err, snapshot.ErrLimit) {
				t.Fatalf("limit %d: err = %v, want a limit", limit, err)
			}
		}
	}
	const small, large = 1250, snapshot.DefaultMaxEntries
	growth := float64(large) / small
	_, l := hostile.Linear(t, "link fan-out", growth, read(small), read(large))
	h1, _ := hostile.Heap(read(small))
	h2, _ := hostile.Heap(read(large))
	heapRatio := float64(h2) / float64(max(h1, 256<<10))
	t.Logf("peak heap %d KiB for %d entries, %d KiB for %d (x%.1f)", h1>>10, small, h2>>10, large, heapRatio)
	if heapRatio > 3*growth {
		t.Errorf("peak heap grew %.1f times for %.0f times the limit: not linear", heapRatio, growth)
	}
	// The 16-level fan-out took 20 s before the entries were counted.
	if l.CPU > 10*time.Second || h2 > 64<<20 {
		t.Errorf("%d entries: CPU %v, peak heap %d MiB", large, l.CPU, h2>>20)
	}
}

// TestReadDirLongLinkChains: links whose targets wander ("a/../a/../…")
// through a chain of other links are cut off as loops after maxLinkSteps
// components, so that each costs a bounded walk; an ordinary chain still
// resolves.
func TestReadDirLongLinkChains(t *testing.T) {
	wander := strings.Repeat("real/../", 500) + "real"
	entries := map[string]string{"real/f": "x", "l0@": wander}
	for i := 1; i < 40; i++ {
		entries[fmt.Sprintf("l%d@", i)] = fmt.Sprintf("l%d", i-1)
	}
	entries["ok1@"] = "real/f"
	entries["ok2@"] = "ok1"
	root := layout(t, entries, nil)
	s, err := snapshot.ReadDir(root, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	om := omissions(s)
	if om["l0"] != "" || string(s.Files["l0/f"]) != "x" {
		t.Errorf("a single wandering link of 1,000 steps resolves: omitted %q, files %v", om["l0"], s.Files)
	}
	if om["l39"] != snapshot.ReasonCycle {
		t.Errorf("l39: %q, want a loop", om["l39"])
	}
	if string(s.Files["ok2"]) != "x" {
		t.Errorf("ok2 = %q", s.Files["ok2"])
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

// TestReadDirLimitsDeterministic: the file a limit is reported at is the
// first, in walk order (sorted names), to cross it, run after run, however
// the filesystem lists the entries.
func TestReadDirLimitsDeterministic(t *testing.T) {
	entries := map[string]string{}
	for i := range 1500 {
		entries[fmt.Sprintf("d%d/f%04d", i%3, i)] = strings.Repeat("x", 100)
	}
	entries["d1/f0700"] = strings.Repeat("y", 500) // too large for MaxFileBytes 300...
	entries["d2/f0100"] = strings.Repeat("y", 500) // ...and so is this one, later in walk order
	root := layout(t, entries, nil)
	for _, c := range []struct {
		limits snapshot.Limits
		limit  string
		path   string
	}{
		// Walk order: d0/… (500 files), then d1/…, then d2/….
		{snapshot.Limits{MaxTotalBytes: 100*600 + 50}, "MaxTotalBytes", "d1/f0301"},
		{snapshot.Limits{MaxFileBytes: 300}, "MaxFileBytes", "d1/f0700"},
		{snapshot.Limits{MaxFiles: 1000}, "MaxFiles", "d2/f0002"},
		// Both limits are crossed; the one a serial read meets first wins.
		{snapshot.Limits{MaxFileBytes: 300, MaxTotalBytes: 100*600 + 50}, "MaxTotalBytes", "d1/f0301"},
		{snapshot.Limits{MaxFileBytes: 300, MaxTotalBytes: 100*900 + 50}, "MaxFileBytes", "d1/f0700"},
	} {
		// Files are read by as many readers as CPUs: whichever gets
		// where first, the error is the serial read's.
		for _, procs := range []int{1, 2, 8} {
			prev := runtime.GOMAXPROCS(procs)
			for range 5 {
				_, err := snapshot.ReadDir(root, snapshot.Options{Limits: c.limits})
				var le *snapshot.LimitError
				if !errors.As(err, &le) || le.Limit != c.limit || le.Path != c.path {
					runtime.GOMAXPROCS(prev)
					t.Fatalf("%+v, %d CPUs: err %v, want %s at %s", c.limits, procs, err, c.limit, c.path)
				}
			}
			runtime.GOMAXPROCS(prev)
		}
	}
}

// TestReadDirClosesEveryFile: whether the read completes or stops at a
// limit, every descriptor is closed when ReadDir returns.
func TestReadDirClosesEveryFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts descriptors in /proc/self/fd, which only Linux has")
	}
	entries := map[string]string{}
	for i := range 2000 {
		entries[fmt.Sprintf("d%02d/f%04d", i%40, i)] = strings.Repeat("x", 100)
	}
	root := layout(t, entries, nil)
	open := func() int {
		fds, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(fds)
	}
	before := open()
	for _, limits := range []snapshot.Limits{{}, {MaxTotalBytes: 100 * 1000}, {MaxFiles: 500}, {MaxEntries: 700}} {
		s, err := snapshot.ReadDir(root, snapshot.Options{Limits: limits})
		if limits == (snapshot.Limits{}) && (err != nil || len(s.Files) != 2000) {
			t.Fatalf("no limit: %v", err)
		}
		if limits != (snapshot.Limits{}) && !errors.Is(err, snapshot.ErrLimit) {
			t.Fatalf("%+v: err = %v, want a limit", limits, err)
		}
		if n := open(); n > before {
			t.Errorf("%+v: %d descriptors open after ReadDir, %d before", limits, n, before)
		}
	}
}
