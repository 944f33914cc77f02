//go:build unix

package snapshot

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/internal/testtree"
)

// TestListIsReadDir: list gives the names and types os.ReadDir gives, over
// several reads of the directory (600 entries of long names are more than
// one buffer holds), and stops one entry past its budget.
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
