package install

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckCatchesTampering: every way of changing an installed tree is
// reported by Check with its path and kind, Verify (the hosts' check)
// refuses the plugin, and Sync restores the tree.
func TestCheckCatchesTampering(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := kvV1().writeDir(t, filepath.Join(dir, "kv"))
	h := openHome(t, filepath.Join(dir, "home"))
	mustInstall(t, h, pathSource(src))
	in, _ := h.Get("kv")
	tree := in.Path
	unlock := func(p string) { os.Chmod(p, 0o755) }

	for _, c := range []struct {
		name   string
		tamper func()
		want   string // "kind: path" of the first problem
	}{
		{"content", func() {
			p := filepath.Join(tree, "README.md")
			os.Chmod(p, 0o644)
			os.WriteFile(p, []byte("evil"), 0o644)
			os.Chmod(p, 0o444)
		}, "modified: README.md (content differs)"},
		{"mode", func() { os.Chmod(filepath.Join(tree, "README.md"), 0o666) }, "modified: README.md (mode 0666, want 0444)"},
		{"exec bit", func() { os.Chmod(filepath.Join(tree, "bin", "db"), 0o444) }, "modified: bin/db (mode 0444, want 0555)"},
		{"missing", func() { unlock(tree); os.Remove(filepath.Join(tree, "README.md")) }, "missing: README.md"},
		{"extra file", func() { unlock(tree); os.WriteFile(filepath.Join(tree, "payload.sh"), []byte("x"), 0o755) }, "extra: payload.sh"},
		{"extra dir", func() { unlock(tree); os.Mkdir(filepath.Join(tree, "hooks"), 0o755) }, "extra: hooks/"},
		{"link", func() {
			unlock(filepath.Join(tree, "bin"))
			os.Remove(filepath.Join(tree, "bin", "db"))
			os.Symlink("/bin/sh", filepath.Join(tree, "bin", "db"))
		}, "modified: bin/db (not a regular file)"},
		{"whole tree", func() { removeTree(tree) }, "missing: . (the whole tree)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.tamper()
			reps, err := h.Check(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(reps) != 1 || len(reps[0].Problems) == 0 || reps[0].Problems[0].String() != c.want {
				t.Fatalf("check: %+v, want %q", reps, c.want)
			}
			err = h.Verify(in)
			var me *ModifiedError
			if !errors.As(err, &me) || !errors.Is(err, ErrModified) || me.Problems[0].String() != c.want {
				t.Fatalf("verify: %v", err)
			}
			res, err := h.Sync(ctx, SyncOptions{})
			if err != nil || res.Changes[0].Action != ActionRestore {
				t.Fatalf("sync: %+v %v", res, err)
			}
			assertClean(t, h)
		})
	}
}

// TestCheckAgainstLock: a tree changed together with its .files list
// agrees with the list, but no longer packs to the lock's archive digest:
// Check reports it. A missing list is reported too.
func TestCheckAgainstLock(t *testing.T) {
	dir := t.TempDir()
	h := openHome(t, filepath.Join(dir, "home"))
	mustInstall(t, h, pathSource(kvV1().writeDir(t, filepath.Join(dir, "kv"))))
	in, _ := h.Get("kv")
	list, err := h.readFileList(in.ArchiveDigest)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(in.Path, "README.md")
	os.Chmod(p, 0o644)
	os.WriteFile(p, []byte("evil"), 0o444)
	os.Chmod(p, 0o444)
	for i, f := range list.Files {
		if f.Path == "README.md" {
			list.Files[i].SHA256 = sha256Hex([]byte("evil"))
		}
	}
	os.Chmod(h.filesPath(in.ArchiveDigest), 0o644)
	writeFile(t, h.filesPath(in.ArchiveDigest), string(list.Encode()))
	if err := h.Verify(in); err != nil {
		t.Fatalf("the list was rewritten to agree: %v", err)
	}
	reps, err := h.Check(context.Background(), []string{"kv"})
	if err != nil || len(reps[0].Problems) != 1 || !strings.Contains(reps[0].Problems[0].Detail, "archiveDigest") {
		t.Fatalf("check: %+v %v", reps, err)
	}
	os.Remove(h.filesPath(in.ArchiveDigest))
	reps, err = h.Check(context.Background(), nil)
	if err != nil || reps[0].Problems[0].Kind != "missing" || !strings.HasSuffix(reps[0].Problems[0].Path, ".files") {
		t.Fatalf("check without a list: %+v %v", reps, err)
	}
	if err := h.Verify(in); err == nil {
		t.Fatal("verify without a list passed")
	}
	if _, err := h.Check(context.Background(), []string{"nope"}); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("check nope: %v", err)
	}
}
