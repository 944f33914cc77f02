//go:build unix

package snapshot_test

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/plugkit/plugkit/snapshot"
)

// openFDs counts the process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count descriptors: %v", err)
	}
	return len(entries)
}

// checkNoLeaks fails when, after a writer is done, descriptors or
// goroutines are left over from before it was created. Goroutines of the
// runtime and the test framework come and go, so they get a moment.
func checkNoLeaks(t *testing.T, fds, goroutines int) {
	t.Helper()
	if n := openFDs(t); n != fds {
		t.Errorf("%d descriptors open, %d before the writer", n, fds)
	}
	for i := 0; runtime.NumGoroutine() > goroutines; i++ {
		if i == 100 {
			t.Fatalf("%d goroutines, %d before the writer", runtime.NumGoroutine(), goroutines)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkOnly fails unless parent holds exactly the names want: nothing
// else, no temporary sibling in particular.
func checkOnly(t *testing.T, parent string, want ...string) {
	t.Helper()
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s holds %q, want %q", parent, got, want)
	}
}

// manyFilesOf returns n files spread over a few directories at several
// depths, with every fifth file executable.
func manyFilesOf(n int) (map[string][]byte, map[string]fs.FileMode) {
	files := map[string][]byte{}
	modes := map[string]fs.FileMode{}
	for i := range n {
		p := fmt.Sprintf("d%d/sub%d/f%04d", i%7, i%3, i)
		if i%11 == 0 {
			p = fmt.Sprintf("top%04d", i)
		}
		files[p] = []byte(p)
		if i%5 == 0 {
			modes[p] = 0o755
		}
	}
	return files, modes
}

// oneFileWriter starts writing dir, with one file handed over.
func oneFileWriter(t *testing.T, dir string) *snapshot.DirWriter {
	t.Helper()
	w, err := snapshot.CreateDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("plugin.json", 0o644, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	return w
}

// Files handed over in any order, the files of a directory scattered among
// those of others as in a foreign archive, come out as WriteDir writes
// them in byte order.
func TestDirWriterAnyOrderWritesTheSnapshot(t *testing.T) {
	files, modes := manyFilesOf(1500)
	s, err := snapshot.New(files, modes)
	if err != nil {
		t.Fatal(err)
	}
	paths := s.Paths()
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
	dir := filepath.Join(t.TempDir(), "out")
	w, err := snapshot.CreateDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if err := w.WriteFile(p, s.Mode(p), s.Files[p]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s is visible before Commit: %v", dir, err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	back, err := snapshot.ReadDir(dir, snapshot.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := snapshot.New(files, nil)
	for p := range files {
		want.Modes[p] = snapshot.FileMode(s.Mode(p))
	}
	if !back.Equal(want) {
		t.Errorf("read back %d files, want %d equal ones", len(back.Files), len(want.Files))
	}
	checkOnly(t, filepath.Dir(dir), "out")
}

// Abort, after any number of files and with writers still busy, removes
// the temporary sibling and leaves the directory as it was, absent or
// empty; no descriptor or writer outlives it.
func TestDirWriterAbortLeavesNothing(t *testing.T) {
	files, modes := manyFilesOf(2000)
	s, _ := snapshot.New(files, modes)
	for _, n := range []int{0, 1, 500, len(files)} {
		for _, existing := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d files, existing %v", n, existing), func(t *testing.T) {
				parent := t.TempDir()
				dir := filepath.Join(parent, "out")
				if existing {
					os.Mkdir(dir, 0o700)
				}
				fds, goroutines := openFDs(t), runtime.NumGoroutine()
				w, err := snapshot.CreateDir(dir)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range s.Paths()[:n] {
					if err := w.WriteFile(p, s.Mode(p), s.Files[p]); err != nil {
						t.Fatal(err)
					}
				}
				if err := w.Abort(); err != nil {
					t.Fatal(err)
				}
				if existing {
					checkOnly(t, parent, "out")
					checkOnly(t, dir)
				} else {
					checkOnly(t, parent)
				}
				checkNoLeaks(t, fds, goroutines)
				if err := w.Commit(); !errors.Is(err, snapshot.ErrWriterClosed) {
					t.Errorf("Commit after Abort: %v", err)
				}
				if err := w.WriteFile("late", 0o644, nil); !errors.Is(err, snapshot.ErrWriterClosed) {
					t.Errorf("WriteFile after Abort: %v", err)
				}
			})
		}
	}
}

// Abort while an early flush of a large tree is under way waits for it:
// nothing is left, no descriptor or goroutine outlives the writer.
func TestDirWriterAbortDuringEarlyFlush(t *testing.T) {
	parent := t.TempDir()
	fds, goroutines := openFDs(t), runtime.NumGoroutine()
	w, err := snapshot.CreateDir(filepath.Join(parent, "out"))
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 3<<20)
	for i := range 4 {
		if err := w.WriteFile(fmt.Sprintf("d%d/f", i), 0o644, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	checkOnly(t, parent)
	checkNoLeaks(t, fds, goroutines)
}

// A file that cannot be written (here: a second file at one path, a file
// where a directory is, a directory where a file is) fails Commit with
// that file's error, however late it came, and leaves nothing.
func TestDirWriterWriteFailureFailsCommit(t *testing.T) {
	for name, late := range map[string]string{
		"duplicate":         "d0/sub0/f0021",
		"file on directory": "d1",
		"directory on file": "top0000/x",
	} {
		t.Run(name, func(t *testing.T) {
			files, _ := manyFilesOf(1000)
			s, _ := snapshot.New(files, nil)
			parent := t.TempDir()
			fds, goroutines := openFDs(t), runtime.NumGoroutine()
			w, err := snapshot.CreateDir(filepath.Join(parent, "out"))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range append(s.Paths(), late) {
				if err := w.WriteFile(p, 0o644, []byte(p)); err != nil {
					t.Fatal(err)
				}
			}
			err = w.Commit()
			var pe *fs.PathError
			if !errors.As(err, &pe) || strings.Contains(err.Error(), ".tmp-") {
				t.Errorf("Commit = %v, want the error of writing %s, naming no temporary directory", err, late)
			}
			checkOnly(t, parent)
			checkNoLeaks(t, fds, goroutines)
		})
	}
}

// An invalid path is refused at once, and the writer then fails Commit
// rather than commit a tree without that file.
func TestDirWriterInvalidPathFailsCommit(t *testing.T) {
	parent := t.TempDir()
	w := oneFileWriter(t, filepath.Join(parent, "out"))
	if err := w.WriteFile("../escape", 0o644, nil); !errors.Is(err, snapshot.ErrInvalidPath) {
		t.Errorf("WriteFile(../escape) = %v", err)
	}
	if err := w.Commit(); !errors.Is(err, snapshot.ErrInvalidPath) {
		t.Errorf("Commit = %v, want the invalid path's error", err)
	}
	checkOnly(t, parent)
}

// The directory must still be absent or empty when the tree is renamed
// into place: one filled, or a file put there, meanwhile is left exactly
// as it is, and the new tree is removed.
func TestDirWriterDirAppearedMeanwhile(t *testing.T) {
	for name, appear := range map[string]func(dir string) error{
		"filled directory": func(dir string) error {
			if err := os.Mkdir(dir, 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "mine"), []byte("keep"), 0o644)
		},
		"file": func(dir string) error { return os.WriteFile(dir, []byte("keep"), 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "out")
			w := oneFileWriter(t, dir)
			if err := appear(dir); err != nil {
				t.Fatal(err)
			}
			err := w.Commit()
			if err == nil || strings.Contains(err.Error(), ".tmp-") {
				t.Fatalf("Commit = %v, want a refusal naming %s", err, dir)
			}
			if name == "filled directory" && !errors.Is(err, snapshot.ErrNotEmpty) {
				t.Errorf("Commit = %v, want ErrNotEmpty", err)
			}
			checkOnly(t, parent, "out")
			kept := filepath.Join(dir, "mine")
			if name == "file" {
				kept = dir
			}
			if b, err := os.ReadFile(kept); string(b) != "keep" {
				t.Errorf("%s: %q, %v", kept, b, err)
			}
		})
	}
	// An empty directory made meanwhile is as good as one there before.
	dir := filepath.Join(t.TempDir(), "out")
	w := oneFileWriter(t, dir)
	os.Mkdir(dir, 0o755)
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	checkOnly(t, dir, "plugin.json")
}

// CreateDir refuses a directory that is not empty, and its parent's
// absence, before it creates anything.
func TestCreateDirRefusesBeforeWriting(t *testing.T) {
	parent := t.TempDir()
	full := filepath.Join(parent, "full")
	os.Mkdir(full, 0o755)
	os.WriteFile(filepath.Join(full, "keep"), nil, 0o644)
	if _, err := snapshot.CreateDir(full); !errors.Is(err, snapshot.ErrNotEmpty) {
		t.Errorf("non-empty: %v", err)
	}
	if _, err := snapshot.CreateDir(filepath.Join(parent, "missing", "out")); !errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), ".tmp-") {
		t.Errorf("missing parent: %v", err)
	}
	checkOnly(t, parent, "full")
}
