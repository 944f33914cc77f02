package build

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateSkillNamesInOtherScripts, through the
// CLI: a skill named in another script loads with a warning, and
// validate --strict refuses it (exit 1).
func TestValidateSkillNamesInOtherScripts(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"plugin.json":            `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "demo"}`,
		"skills/技能/SKILL.md":     "---\nname: 技能\ndescription: Does things. Use when asked.\n---\nBody\n",
		"skills/deploy/SKILL.md": "---\nname: deploy\ndescription: Deploys. Use when asked.\n---\nBody\n",
	}
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := runCLI(t, "validate", dir)
	if code != 0 || !strings.Contains(stdout, "skills/技能/SKILL.md:2:7: warning[skill-name-not-ascii]") || !strings.Contains(stdout, "2 skills") {
		t.Errorf("validate: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "validate", "--strict", dir)
	if code != 1 || !strings.Contains(stdout, "error[skill-name-not-ascii]") || !strings.Contains(stdout, "1 skill,") {
		t.Errorf("validate --strict: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, help, _ := runCLI(t, "validate", "--help"); !strings.Contains(help, "skill names outside ASCII as errors") {
		t.Errorf("validate --help does not say what --strict refuses:\n%s", help)
	}
}
