package host

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSkillsProvider(t *testing.T) {
	root := writePlugin(t, pluginSpec{name: "docs", skills: map[string]string{
		"deploy": "Run ./scripts/go.sh.", "review": "Read <carefully>.",
	}, files: map[string]string{
		"skills/deploy/scripts/go.sh":      "#!/bin/sh\n",
		"skills/deploy/reference/notes.md": "notes",
		"skills/review/other.md":           "other",
		"secret.txt":                       "not a skill file",
	}})
	outside := filepath.Join(t.TempDir(), "outside.txt")
	mustWrite(t, outside, "outside the plugin")
	if err := os.Symlink(outside, filepath.Join(root, "skills/deploy/escape.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../review/other.md", filepath.Join(root, "skills/deploy/inside.md")); err != nil {
		t.Fatal(err)
	}
	other := loadPlugin(t, writePlugin(t, pluginSpec{name: "other", skills: map[string]string{"deploy": "Other."}}))
	h := newHost(t, []Plugin{loadPlugin(t, root), other}, Options{})

	var ids []string
	for _, s := range h.Skills() {
		ids = append(ids, s.ID)
		if s.ID == "docs/deploy" && (s.Location != filepath.Join(root, "skills/deploy/SKILL.md") || s.Description != "The deploy skill.") {
			t.Errorf("docs/deploy: %+v", s)
		}
	}
	if !slices.Equal(ids, []string{"docs/deploy", "docs/review", "other/deploy"}) {
		t.Errorf("skills %q", ids)
	}
	prompt := h.Prompt()
	for _, want := range []string{"<available_skills>", "<name>docs/deploy</name>", "<name>other/deploy</name>", filepath.Join(root, "skills/review/SKILL.md")} {
		if !strings.Contains(prompt, want) {
			t.Errorf("Prompt lacks %q:\n%s", want, prompt)
		}
	}

	act, err := h.Skill("docs/deploy")
	if err != nil {
		t.Fatal(err)
	}
	if act.Body != "Run ./scripts/go.sh." || !slices.Equal(act.Files, []string{"SKILL.md", "inside.md", "reference/notes.md", "scripts/go.sh"}) {
		t.Errorf("Skill: body %q files %q", act.Body, act.Files)
	}
	for file, want := range map[string]string{"SKILL.md": "---\nname: deploy", "scripts/go.sh": "#!/bin/sh", "inside.md": "other"} {
		if b, err := h.ReadResource("docs/deploy", file); err != nil || !strings.HasPrefix(string(b), want) {
			t.Errorf("ReadResource %s: %q %v", file, b, err)
		}
	}
	for _, file := range []string{"../review/other.md", "/etc/passwd", "scripts/../../review/other.md", "..", "a//b", "./SKILL.md", `scripts\go.sh`, ""} {
		if _, err := h.ReadResource("docs/deploy", file); !errors.Is(err, ErrEscape) {
			t.Errorf("ReadResource %q: %v, want ErrEscape", file, err)
		}
	}
	for _, file := range []string{"escape.txt", "missing.md", "secret.txt"} {
		if _, err := h.ReadResource("docs/deploy", file); !errors.Is(err, ErrNotFound) {
			t.Errorf("ReadResource %q: %v, want ErrNotFound", file, err)
		}
	}
	for _, id := range []string{"docs/nosuch", "nosuch/deploy", "docs", ""} {
		if _, err := h.Skill(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Skill %q: %v, want ErrNotFound", id, err)
		}
	}
}
