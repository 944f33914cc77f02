package snapshot

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/plugkit/plugkit/internal/testtree"
)

// TestListIsReadDir: list reads the kernel's records into the names and
// types os.ReadDir gives, over several getdents calls (600 entries of long
// names are more than one buffer holds), and stops one entry past its
// budget.
func TestListIsReadDir(t *testing.T) {
	dir := t.TempDir()
	entries := map[string]string{"sub/x": "", "link@": "sub", "empty/": ""}
	for i := range 600 {
		entries[fmt.Sprintf("%s-%03d", strings.Repeat("n", 40), i)] = "x"
	}
	testtree.Write(t, dir, entries)
	testtree.Mkfifo(t, filepath.Join(dir, "fifo"))
	osEntries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]fs.FileMode{}
	for _, e := range osEntries {
		want[e.Name()] = e.Type()
	}
	list := func(n int) []dirEntry {
		h, err := openRootHandle(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer h.close()
		all, err := h.list(n)
		if err != nil {
			t.Fatal(err)
		}
		return all
	}
	got := map[string]fs.FileMode{}
	for _, e := range list(10_000) {
		got[e.name] = e.typ
	}
	if !maps.Equal(got, want) {
		t.Fatalf("list gave %d entries, os.ReadDir %d; they differ", len(got), len(want))
	}
	for _, n := range []int{0, 1, 99, 600} {
		if some := list(n); len(some) != n+1 {
			t.Errorf("list(%d) gave %d entries, want %d", n, len(some), n+1)
		}
	}
}

// TestEntryTypeUnknown: for a filesystem that records no types
// (DT_UNKNOWN), each entry's type comes from fstatat and is the one the
// kernel's d_type gives, and an entry removed since the listing is left
// out.
func TestEntryTypeUnknown(t *testing.T) {
	dir := t.TempDir()
	testtree.Write(t, dir, map[string]string{"file": "x", "dir/": "", "link@": "file"})
	testtree.Mkfifo(t, filepath.Join(dir, "fifo"))
	h, err := openRootHandle(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	kinds := map[string]byte{"file": unix.DT_REG, "dir": unix.DT_DIR, "link": unix.DT_LNK, "fifo": unix.DT_FIFO}
	for name, kind := range kinds {
		known, ok1, err1 := h.entryType(name, kind)
		asked, ok2, err2 := h.entryType(name, unix.DT_UNKNOWN)
		if err1 != nil || err2 != nil || !ok1 || !ok2 || known != asked {
			t.Errorf("%s: type %v (%v, %v) from fstatat, %v (%v, %v) from d_type", name, asked, ok2, err2, known, ok1, err1)
		}
	}
	if _, ok, err := h.entryType("gone", unix.DT_UNKNOWN); ok || err != nil {
		t.Errorf("a removed entry: ok %v, err %v; want it left out", ok, err)
	}
}
