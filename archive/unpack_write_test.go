package archive_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/snapshot"
)

// unpackInto unpacks b while writing its files into the new directory
// dir, as plugkit unpack does: committed when Unpack accepts the archive,
// aborted when it refuses it. It returns Unpack's snapshot and error.
func unpackInto(t *testing.T, dir string, b []byte, opts archive.UnpackOptions) (*snapshot.Snapshot, error) {
	t.Helper()
	w, err := snapshot.CreateDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	opts.OnFile = w.WriteFile
	s, err := archive.Unpack(b, opts)
	if err != nil {
		if aerr := w.Abort(); aerr != nil {
			t.Fatal(aerr)
		}
		return nil, err
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return s, nil
}

// checkEmpty fails unless dir holds nothing: no new tree, no temporary
// sibling.
func checkEmpty(t *testing.T, dir string) {
	t.Helper()
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("%s holds %v (%v), want nothing", dir, entries, err)
	}
}

// Every hostile archive, refused wherever its fault lies, after
// whatever files came before it were written, leaves nothing behind.
func TestUnpackWritingRefusalLeavesNothing(t *testing.T) {
	for _, c := range hostileArchives(false) {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			if _, err := unpackInto(t, filepath.Join(parent, "out"), c.b, c.opts); !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			checkEmpty(t, parent)
		})
	}
}

// The refusal comes at the very last entry, or after it, once every file
// has been handed to the writer: still nothing is left.
func TestUnpackWritingRefusalAtTheLastEntryLeavesNothing(t *testing.T) {
	files := manyFiles(300)
	for name, c := range map[string]struct {
		b    []byte
		want error
	}{
		"symlink last":            {gz(tarOf(append(files, raw{name: "z", typ: '2', linkname: "/"})...)), archive.ErrSymlink},
		"duplicate last":          {gz(tarOf(append(files, file("f/000000", "again"))...)), archive.ErrDuplicate},
		"bad padding last":        {gz(tarOf(append(files, raw{name: "z", data: []byte("x"), pad: func(n int) []byte { return []byte{1} }})...)), archive.ErrSize},
		"trailing data after end": {gz(append(tarOf(files...), 'x')), archive.ErrTrailingData},
		"data after gzip stream":  {append(gz(tarOf(files...)), 'x'), archive.ErrTrailingData},
		"truncated":               {gz(tarOf(files...)[:300*512+512]), archive.ErrTruncated},
	} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			if _, err := unpackInto(t, filepath.Join(parent, "out"), c.b, archive.UnpackOptions{}); !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			checkEmpty(t, parent)
		})
	}
}

// A foreign archive is not sorted and implies its directories: a file
// and a directory at one path, or a directory entry on a file, are found
// only when the second of them comes, long after the first was written.
func TestUnpackWritingLateConflictInUnsortedArchive(t *testing.T) {
	for name, entries := range map[string][]raw{
		"file on implied directory": {file("b/x", "x"), file("c/d/y", "y"), file("a/z", "z"), file("c/e", "e"), file("c/d", "late")},
		"directory under a file":    {file("c/d", "d"), file("a/z", "z"), file("b/x", "x"), file("c/d/y", "late")},
		"directory entry on a file": {file("b/x", "x"), file("a", "a"), file("c", "c"), dir("a/")},
	} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			if _, err := unpackInto(t, filepath.Join(parent, "out"), gz(tarOf(entries...)), archive.UnpackOptions{}); !errors.Is(err, archive.ErrConflict) {
				t.Fatalf("err = %v, want ErrConflict", err)
			}
			checkEmpty(t, parent)
		})
	}
}

// A limit crossed half-way through stops the writing, and what was
// written is removed.
func TestUnpackWritingLimitCrossedMidwayLeavesNothing(t *testing.T) {
	for name, opts := range map[string]archive.UnpackOptions{
		"MaxFiles":      {Limits: archive.Limits{MaxFiles: 150}},
		"MaxTotalBytes": {Limits: archive.Limits{MaxTotalBytes: 150 * 7}},
		"MaxEntries":    {Limits: archive.Limits{MaxEntries: 150}},
	} {
		t.Run(name, func(t *testing.T) {
			var es []raw
			for i := range 300 {
				es = append(es, file(fmt.Sprintf("d%d/f%03d", i%4, i), "1234567"))
			}
			parent := t.TempDir()
			var handed int
			w, err := snapshot.CreateDir(filepath.Join(parent, "out"))
			if err != nil {
				t.Fatal(err)
			}
			opts.OnFile = func(p string, m fs.FileMode, b []byte) error {
				handed++
				return w.WriteFile(p, m, b)
			}
			_, err = archive.Unpack(gz(tarOf(es...)), opts)
			w.Abort()
			if !errors.Is(err, archive.ErrLimit) {
				t.Fatalf("err = %v, want a limit", err)
			}
			if handed != 150 {
				t.Errorf("%d files handed over before the limit, want 150", handed)
			}
			checkEmpty(t, parent)
		})
	}
}

// OnFile sees every file once, in archive order, with its path below the
// root, its recorded mode and the bytes the snapshot holds, and nothing
// of the directories; what it writes is the snapshot.
func TestUnpackOnFileSeesTheFilesInArchiveOrder(t *testing.T) {
	entries := []raw{
		dir("demo/"), file("demo/z/late", "z"), dir("demo/empty/"), {name: "demo/bin/run", mode: "0000775", data: []byte("#!/bin/sh\n")},
		file("demo/a", "a"), dir("demo/z/"), file("demo/plugin.json", "{}"),
	}
	var got []string
	var modes []fs.FileMode
	opts := archive.UnpackOptions{Root: "demo"}
	b := gz(tarOf(entries...))
	opts.OnFile = func(p string, m fs.FileMode, data []byte) error {
		got = append(got, p+"="+string(data))
		modes = append(modes, m)
		return nil
	}
	s, err := archive.Unpack(b, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"z/late=z", "bin/run=#!/bin/sh\n", "a=a", "plugin.json={}"}
	if !slices.Equal(got, want) || !slices.Equal(modes, []fs.FileMode{0o644, 0o775, 0o644, 0o644}) {
		t.Errorf("OnFile saw %q %v, want %q", got, modes, want)
	}
	if len(s.Files) != len(want) {
		t.Errorf("snapshot has %d files", len(s.Files))
	}
	dir := filepath.Join(t.TempDir(), "out")
	s, err = unpackInto(t, dir, b, archive.UnpackOptions{Root: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	back, err := snapshot.ReadDir(dir, snapshot.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Modes["bin/run"] = 0o755 // written as pack writes it
	if !back.Equal(s) {
		t.Errorf("written %v, unpacked %v", back.Files, s.Files)
	}
	if _, err := os.Stat(filepath.Join(dir, "empty")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an empty directory was written: %v", err)
	}
}

// An error from OnFile stops Unpack at that file and is returned as it is.
func TestUnpackOnFileErrorStops(t *testing.T) {
	stop := errors.New("stop here")
	calls := 0
	_, err := archive.Unpack(gz(tarOf(manyFiles(5)...)), archive.UnpackOptions{OnFile: func(string, fs.FileMode, []byte) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	}})
	if err != stop || calls != 2 {
		t.Errorf("err = %v after %d calls, want %v after 2", err, calls, stop)
	}
}
