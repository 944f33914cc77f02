//go:build unix

package install

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/plugkit/plugkit/internal/testbin"
)

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }

// crashBinary is plugkit built with the crash points compiled in: with
// PLUGKIT_CRASH_AT=POINT it kills itself with SIGKILL at that point.
// Without the variable it is the ordinary plugkit.
func crashBinary(t *testing.T) string {
	t.Helper()
	return testbin.Plugkit(t, "plugkit_crashpoints")
}

// crashScenario is a write run by the real binary against a prepared
// home: the state before, the state after, and the points it passes.
type crashScenario struct {
	name string
	// setup prepares the home (in process) and returns the plugkit
	// arguments of the write, without --home.
	setup  func(t *testing.T, dir string, h *Home) []string
	points []string
	// data is a file in a data directory that must hold "precious" in
	// the state before, and in the state after when afterKeepsData.
	data           string
	afterKeepsData bool
	// damaged is a plugin whose tree is missing in the state before.
	damaged string
}

func crashScenarios() []crashScenario {
	kvWithData := func(t *testing.T, dir string, h *Home) string {
		src := kvV1().writeDir(t, filepath.Join(dir, "kv"))
		mustInstall(t, h, pathSource(src), pathSource(plugin{name: "notes", version: "1"}.writeDir(t, filepath.Join(dir, "notes"))))
		writeFile(t, filepath.Join(h.DataDir("kv"), "state"), "precious")
		return src
	}
	return []crashScenario{
		{
			name: "install",
			setup: func(t *testing.T, dir string, h *Home) []string {
				kvWithData(t, dir, h)
				src := plugin{name: "tools", version: "1", files: map[string]string{"bin/t": "#!/bin/sh\n"}}.writeDir(t, filepath.Join(dir, "tools"))
				return []string{"install", src, "--yes"}
			},
			points:         []string{"tree-written", "files-written", "tree-renamed", "plugkit.lock-written", "committed"},
			data:           "kv/state",
			afterKeepsData: true,
		},
		{
			name: "update",
			setup: func(t *testing.T, dir string, h *Home) []string {
				src := kvWithData(t, dir, h)
				v2 := kvV1()
				v2.version = "2.0.0"
				v2.mcp = mcpJSON(map[string]string{"db": `{"type": "stdio", "command": "./bin/db", "args": ["--v2"]}`})
				v2.writeDir(t, src)
				return []string{"update", "--yes"}
			},
			points:         []string{"tree-written", "files-written", "tree-renamed", "plugkit.lock-written", "committed", "tree-trashed"},
			data:           "kv/state",
			afterKeepsData: true,
		},
		{
			name: "replace",
			setup: func(t *testing.T, dir string, h *Home) []string {
				kvWithData(t, dir, h)
				other := kvV1()
				other.version = "9.0.0"
				return []string{"install", other.writeDir(t, filepath.Join(dir, "other", "kv")), "--replace", "--yes"}
			},
			points: []string{"tree-written", "tree-renamed", ".journal-written", "plugkit.lock-written", "committed",
				"data-trashed", "data-moved-out", "tree-trashed"},
			data: "kv/state",
		},
		{
			name: "remove",
			setup: func(t *testing.T, dir string, h *Home) []string {
				kvWithData(t, dir, h)
				return []string{"remove", "kv", "--purge"}
			},
			points: []string{".journal-written", "plugkit.lock-written", "committed", "data-trashed", "tree-trashed"},
			data:   "kv/state",
		},
		{
			name: "policy",
			setup: func(t *testing.T, dir string, h *Home) []string {
				kvWithData(t, dir, h)
				writeFile(t, filepath.Join(dir, "policy.json"), `{"rules": [{"name": "*", "method": "local-directory", "directories": ["."]}]}`)
				src := plugin{name: "tools", version: "1"}.writeDir(t, filepath.Join(dir, "tools"))
				return []string{"install", src, "--yes", "--policy", filepath.Join(dir, "policy.json")}
			},
			points:         []string{"policy.json-written", ".journal-written", "plugkit.lock-written", "committed"},
			data:           "kv/state",
			afterKeepsData: true,
		},
		{
			name: "sync",
			setup: func(t *testing.T, dir string, h *Home) []string {
				kvWithData(t, dir, h)
				in, _ := h.Get("kv")
				removeTree(in.Path)
				return []string{"sync"}
			},
			points:         []string{"tree-written", "files-written", "tree-renamed"},
			data:           "kv/state",
			afterKeepsData: true,
			damaged:        "kv",
		},
	}
}

// TestCrashAtEveryPoint kills the real plugkit binary with SIGKILL at
// every point of install, update, replace, remove and sync, and proves
// that the home is then in the state before or the state after — every
// listed tree intact, data in place — and that the next run finishes
// what was committed and removes every leftover.
func TestCrashAtEveryPoint(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the plugkit binary many times")
	}
	bin := crashBinary(t)
	for _, sc := range crashScenarios() {
		// The state after, from an uninterrupted run.
		after := runScenario(t, bin, sc, "")
		for _, point := range sc.points {
			t.Run(sc.name+"/"+point, func(t *testing.T) {
				dir := t.TempDir()
				h := openHome(t, filepath.Join(dir, "home"))
				args := sc.setup(t, dir, h)
				before := readFile(t, h.LockPath())
				err := plugkitRun(bin, h.Dir(), point, args)
				if !killed(err) {
					t.Fatalf("the run did not reach %s: %v", point, err)
				}
				lock := readFile(t, h.LockPath())
				committed := lock != before
				if committed && !sameLock(t, lock, after) {
					t.Fatalf("after a crash at %s the lock is neither the old nor the new one:\n%s", point, lock)
				}
				// Usable as it is: every listed tree intact.
				reps, err := h.Check(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range reps {
					if len(r.Problems) > 0 && r.Name != sc.damaged {
						t.Errorf("after a crash at %s, %s: %v", point, r.Name, r.Problems)
					}
				}
				if !committed {
					if got := readFile(t, filepath.Join(h.Dir(), "data", sc.data)); got != "precious" {
						t.Errorf("uncommitted crash lost data: %q", got)
					}
				}
				// The next run finishes and cleans.
				if err := plugkitRun(bin, h.Dir(), "", []string{"sync"}); err != nil {
					t.Fatalf("next run: %v", err)
				}
				assertClean(t, h)
				if lock2 := readFile(t, h.LockPath()); lock2 != lock {
					t.Fatalf("the next run changed the lock")
				}
				l, _ := h.ReadLock()
				if pol, err := h.Policy(); err != nil || (l.Policy != "") != (pol != nil) || (pol != nil && pol.Digest.String() != l.Policy) {
					t.Errorf("lock policy %q, home policy %v (%v)", l.Policy, pol, err)
				}
				_, err = os.Stat(filepath.Join(h.Dir(), "data", sc.data))
				if keeps := !committed || sc.afterKeepsData; keeps != (err == nil) {
					t.Errorf("committed %v: data file present %v, want %v", committed, err == nil, keeps)
				}
			})
		}
	}
}

// TestCrashAtRandomMoments kills update and replace runs after random
// delays and checks the same invariants.
func TestCrashAtRandomMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the plugkit binary many times")
	}
	bin := crashBinary(t)
	for _, sc := range crashScenarios()[1:3] {
		after := runScenario(t, bin, sc, "")
		var committed int
		defer func() { t.Logf("%s: %d of 12 kills came after the commit", sc.name, committed) }()
		for i := 0; i < 12; i++ {
			dir := t.TempDir()
			h := openHome(t, filepath.Join(dir, "home"))
			args := sc.setup(t, dir, h)
			before := readFile(t, h.LockPath())
			cmd := exec.Command(bin, append(args, "--home", h.Dir())...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Duration(rand.IntN(60)) * time.Millisecond)
			cmd.Process.Kill()
			cmd.Wait()
			lock := readFile(t, h.LockPath())
			if lock != before && !sameLock(t, lock, after) {
				t.Fatalf("%s: lock neither old nor new", sc.name)
			}
			if lock != before {
				committed++
			}
			reps, err := h.Check(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range reps {
				if len(r.Problems) > 0 {
					t.Errorf("%s: %s: %v", sc.name, r.Name, r.Problems)
				}
			}
			if err := plugkitRun(bin, h.Dir(), "", []string{"sync"}); err != nil {
				t.Fatalf("next run: %v", err)
			}
			assertClean(t, h)
		}
	}
}

// runScenario runs a scenario without a crash and returns its lock.
func runScenario(t *testing.T, bin string, sc crashScenario, point string) string {
	t.Helper()
	dir := t.TempDir()
	h := openHome(t, filepath.Join(dir, "home"))
	args := sc.setup(t, dir, h)
	if err := plugkitRun(bin, h.Dir(), point, args); err != nil {
		t.Fatalf("%s: %v", sc.name, err)
	}
	assertClean(t, h)
	return readFile(t, h.LockPath())
}

func plugkitRun(bin, home, point string, args []string) error {
	cmd := exec.Command(bin, append(args, "--home", home)...)
	cmd.Env = append(os.Environ(), "PLUGKIT_CRASH_AT="+point)
	out, err := cmd.CombinedOutput()
	if err != nil && !killed(err) {
		return errors.New(err.Error() + ": " + string(out))
	}
	return err
}

func killed(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// sameLock compares two locks ignoring installedAt, source paths and the
// policy digest, which differ between two runs of one scenario in two
// directories.
func sameLock(t *testing.T, a, b string) bool {
	t.Helper()
	norm := func(s string) string {
		l, err := ParseLock([]byte(s), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if l.Policy != "" {
			l.Policy = digestA // its directories differ between two runs
		}
		for i := range l.Plugins {
			l.Plugins[i].InstalledAt = ""
			l.Plugins[i].Source.Path = filepath.Base(l.Plugins[i].Source.Path)
		}
		return string(l.Encode())
	}
	return norm(a) == norm(b)
}
