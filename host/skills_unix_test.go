//go:build unix

package host

import (
	"errors"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestSkillSpecialFilesNeverServed: a fifo (or any special file) in a
// skill's directory is left out when the plugin loads, so it is neither
// listed among the skill's files nor readable: ReadResource never opens
// it, and so never blocks on it.
func TestSkillSpecialFilesNeverServed(t *testing.T) {
	root := writePlugin(t, pluginSpec{name: "p", skills: map[string]string{"s": "Body."},
		files: map[string]string{"skills/s/ok.md": "ok"}})
	if err := syscall.Mkfifo(filepath.Join(root, "skills/s/pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, []Plugin{loadPlugin(t, root)}, Options{})
	act, err := h.Skill("p/s")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(act.Files, []string{"SKILL.md", "ok.md"}) {
		t.Errorf("files %q, want the fifo left out", act.Files)
	}
	if _, err := h.ReadResource("p/s", "pipe"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ReadResource of a fifo: %v, want ErrNotFound", err)
	}
}
