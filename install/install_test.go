package install

import (
	"context"
	"path/filepath"
	"testing"
)

func TestInstallDirectory(t *testing.T) {
	dir := t.TempDir()
	src := plugin{name: "kv", version: "1.0.0", skills: map[string]string{"hello": "Hi."},
		mcp:   mcpJSON(map[string]string{"db": `{"type": "stdio", "command": "./bin/db", "args": ["--x"], "env": {"TOKEN": "s3cret"}}`}),
		files: map[string]string{"bin/db": "#!/bin/sh\necho\n"}}.writeDir(t, filepath.Join(dir, "kv"))
	h := openHome(t, filepath.Join(dir, "home"))
	res := mustInstall(t, h, pathSource(src))
	if len(res.Changes) != 1 || res.Changes[0].Action != ActionInstall {
		t.Fatalf("changes: %+v", res.Changes)
	}
	t.Logf("%s", readFile(t, h.LockPath()))
	list, err := h.List()
	if err != nil || len(list) != 1 {
		t.Fatal(list, err)
	}
	if err := h.Verify(&list[0]); err != nil {
		t.Fatal(err)
	}
	reps, err := h.Check(context.Background(), nil)
	if err != nil || len(reps) != 1 || len(reps[0].Problems) != 0 {
		t.Fatal(reps, err)
	}
}
