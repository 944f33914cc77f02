package snapshot_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/snapshot"
)

// partialTree is a directory with files held and deferred, reached
// directly and through links inside the root, next to links and a fifo
// the reader omits.
var partialTree = map[string]string{
	"plugin.json":       `{"name":"p"}`,
	"real/file.txt":     "inside",
	"real/run.sh":       "#!/bin/sh\n",
	"alias.txt@":        "real/file.txt",
	"dirlink@":          "real",
	"deep/a/b/c.txt":    "deep",
	"escape@":           "../outside/secret.txt",
	"broken@":           "missing",
	"fifo|":             "",
	"skills/x/SKILL.md": "---\nname: x\n---\n",
}

func holdJSON(p string) bool { return strings.HasSuffix(p, ".json") }

func readPartial(t *testing.T, root string, hold func(string) bool) *snapshot.Partial {
	t.Helper()
	part, err := snapshot.ReadPartial(root, snapshot.Options{}, hold)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { part.Close() })
	return part
}

// ReadPartial sees exactly what ReadDir sees: the same paths, modes and
// omissions; only the bytes of the files it is not asked to hold stay on
// disk, and Open streams exactly the bytes ReadDir read.
func TestReadPartialIsReadDirWithoutTheBytes(t *testing.T) {
	root := layout(t, partialTree, map[string]string{"secret.txt": "secret"})
	full, err := snapshot.ReadDir(root, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	part := readPartial(t, root, holdJSON)
	if got, want := part.Paths(), full.Paths(); !reflect.DeepEqual(got, want) {
		t.Fatalf("paths %q, want %q", got, want)
	}
	if !reflect.DeepEqual(part.Held.Omitted, full.Omitted) {
		t.Errorf("omitted %v, want %v", part.Held.Omitted, full.Omitted)
	}
	if got := part.Held.Paths(); !reflect.DeepEqual(got, []string{"plugin.json"}) {
		t.Errorf("held %q, want only plugin.json", got)
	}
	if part.Len() != len(full.Files) {
		t.Errorf("Len %d, want %d", part.Len(), len(full.Files))
	}
	ix, fix := part.Index(), full.Index()
	for _, p := range append(full.Paths(), "real", "deep/a", "skills", "nothing") {
		if part.Mode(p) != full.Mode(p) {
			t.Errorf("%s: mode %v, want %v", p, part.Mode(p), full.Mode(p))
		}
		if ix.Kind(p) != fix.Kind(p) {
			t.Errorf("%s: kind %v, want %v", p, ix.Kind(p), fix.Kind(p))
		}
	}
	for p, f := range part.Deferred {
		if f.Size != int64(len(full.Files[p])) {
			t.Errorf("%s: size %d, want %d", p, f.Size, len(full.Files[p]))
		}
		r, err := part.Open(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil || string(b) != string(full.Files[p]) {
			t.Errorf("%s: read %q, %v; want %q", p, b, err, full.Files[p])
		}
	}
	if _, err := part.Open("plugin.json"); err == nil {
		t.Error("Open of a held file succeeded")
	}
}

// Deferred files count towards the limits as read ones do, with the same
// errors.
func TestReadPartialLimits(t *testing.T) {
	root := t.TempDir()
	big := strings.Repeat("x", 600)
	for _, p := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(root, p), []byte(big), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	holdNone := func(string) bool { return false }
	for _, lim := range []snapshot.Limits{{MaxTotalBytes: 1000}, {MaxFileBytes: 500}, {MaxFiles: 1}} {
		_, want := snapshot.ReadDir(root, snapshot.Options{Limits: lim})
		_, err := snapshot.ReadPartial(root, snapshot.Options{Limits: lim}, holdNone)
		if !errors.Is(err, snapshot.ErrLimit) || err.Error() != want.Error() {
			t.Errorf("%+v: err %v, want %v", lim, err, want)
		}
	}
	if _, err := snapshot.ReadPartial(root, snapshot.Options{}, nil); err == nil {
		t.Error("ReadPartial without a hold function succeeded")
	}
}

// A deferred file that is no longer the regular file of the size the
// reader found is refused with ErrChanged when opened, or while read when
// it changes after the open, however it changed; a link swapped in is
// never followed, inside the root or out of it.
func TestPartialOpenRefusesChangedFiles(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(t *testing.T, root string)
	}{
		{"grown", func(t *testing.T, root string) { appendTo(t, filepath.Join(root, "real/file.txt"), "more") }},
		{"shrunk", func(t *testing.T, root string) { truncate(t, filepath.Join(root, "real/file.txt"), 2) }},
		{"link-inside", func(t *testing.T, root string) {
			replace(t, filepath.Join(root, "real/file.txt"), func(p string) error { return os.Symlink("run.sh", p) })
		}},
		{"link-escaping", func(t *testing.T, root string) {
			replace(t, filepath.Join(root, "real/file.txt"), func(p string) error {
				return os.Symlink(filepath.Join(filepath.Dir(root), "outside/secret.txt"), p)
			})
		}},
		{"parent-link", func(t *testing.T, root string) {
			replace(t, filepath.Join(root, "real"), func(p string) error {
				return os.Symlink(filepath.Join(filepath.Dir(root), "outside"), p)
			})
		}},
		{"directory", func(t *testing.T, root string) {
			replace(t, filepath.Join(root, "real/file.txt"), func(p string) error { return os.Mkdir(p, 0o755) })
		}},
		{"removed", func(t *testing.T, root string) { replace(t, filepath.Join(root, "real/file.txt"), nil) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := layout(t, map[string]string{"real/file.txt": "inside", "real/run.sh": "#!/bin/sh\n"},
				map[string]string{"secret.txt": "secret", "file.txt": "inside"})
			part := readPartial(t, root, holdJSON)
			c.change(t, root)
			r, err := part.Open("real/file.txt")
			if err == nil {
				_, err = io.ReadAll(r)
				r.Close()
			}
			if !errors.Is(err, snapshot.ErrChanged) || !strings.Contains(err.Error(), "real/file.txt changed while packing") {
				t.Fatalf("err = %v, want real/file.txt changed while packing", err)
			}
			t.Log(err)
		})
	}
}

// A deferred file that changes size after it was opened is caught while
// it is read: the reader yields no more and no fewer bytes than recorded.
func TestPartialReadCatchesChangesAfterOpen(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(t *testing.T, p string)
	}{
		{"grown", func(t *testing.T, p string) { appendTo(t, p, "more") }},
		{"shrunk", func(t *testing.T, p string) { truncate(t, p, 2) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			p := filepath.Join(root, "f")
			if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
				t.Fatal(err)
			}
			part := readPartial(t, root, holdJSON)
			r, err := part.Open("f")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			c.change(t, p)
			_, err = io.ReadAll(r)
			if !errors.Is(err, snapshot.ErrChanged) {
				t.Fatalf("err = %v, want ErrChanged", err)
			}
		})
	}
}

// After Close, nothing more is opened through the root.
func TestPartialOpenAfterClose(t *testing.T) {
	root := layout(t, map[string]string{"f": "x"}, nil)
	part, err := snapshot.ReadPartial(root, snapshot.Options{}, holdJSON)
	if err != nil {
		t.Fatal(err)
	}
	part.Close()
	if _, err := part.Open("f"); err == nil {
		t.Fatal("Open after Close succeeded")
	}
}

func appendTo(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func truncate(t *testing.T, p string, n int64) {
	t.Helper()
	if err := os.Truncate(p, n); err != nil {
		t.Fatal(err)
	}
}

// replace removes what is at p and, unless make is nil, makes something
// else there.
func replace(t *testing.T, p string, make func(p string) error) {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	if make != nil {
		if err := make(p); err != nil {
			t.Fatal(err)
		}
	}
}

// A path a caller put in both Held and Deferred is one deferred file.
func TestPartialPathInBoth(t *testing.T) {
	root := layout(t, map[string]string{"a.json": "{}", "b": "bb"}, nil)
	part := readPartial(t, root, holdJSON)
	part.Deferred["a.json"] = snapshot.DeferredFile{Size: 2, Mode: 0o755}
	if got := part.Paths(); !reflect.DeepEqual(got, []string{"a.json", "b"}) || part.Len() != 2 {
		t.Errorf("paths %q, Len %d; want a.json and b once", got, part.Len())
	}
	if part.Mode("a.json") != 0o755 {
		t.Errorf("mode %v, want the deferred entry's", part.Mode("a.json"))
	}
	if _, err := part.Open("a.json"); err == nil || errors.Is(err, snapshot.ErrChanged) {
		t.Errorf("Open of a deferred entry ReadPartial did not make: err = %v", err)
	}
}
