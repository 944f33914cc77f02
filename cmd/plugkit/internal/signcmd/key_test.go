package signcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
)

// TestKeyGenerateForceReplacesThePair: key generate --force replaces an
// existing pair together or not at all. With a directory where either
// file goes, it fails before renaming anything: the other file of the old
// pair is untouched (a file-by-file commit had already replaced, then
// deleted, the .pub), and no temporary file is left.
func TestKeyGenerateForceReplacesThePair(t *testing.T) {
	t.Setenv("COSIGN_PASSWORD", "")
	for _, blocked := range []string{"k.key", "k.pub"} {
		t.Run(blocked, func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range []string{"k.key", "k.pub"} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte("old "+name), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			os.Remove(filepath.Join(dir, blocked))
			if err := os.MkdirAll(filepath.Join(dir, blocked, "x"), 0o755); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runCLI(t, "key", "generate", "--output-key-prefix", filepath.Join(dir, "k"), "--force", "--json")
			if code != command.ExitUsage || clitest.ErrorCode(t, stdout) != command.CodeIO || !strings.Contains(stderr, blocked) || strings.Contains(stderr, ".tmp-") {
				t.Fatalf("exit %d %s %s", code, stdout, stderr)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 2 {
				t.Fatalf("left behind: %v", ents)
			}
			for _, name := range []string{"k.key", "k.pub"} {
				if name == blocked {
					continue
				}
				if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != "old "+name {
					t.Errorf("%s was changed: %q", name, b)
				}
			}
		})
	}
	// Without a directory in the way, --force replaces both.
	dir := t.TempDir()
	prefix := filepath.Join(dir, "k")
	mustRun(t, "key", "generate", "--output-key-prefix", prefix)
	oldPub, _ := os.ReadFile(prefix + ".pub")
	mustRun(t, "key", "generate", "--output-key-prefix", prefix, "--force")
	if newPub, _ := os.ReadFile(prefix + ".pub"); string(newPub) == string(oldPub) {
		t.Error("--force kept the old public key")
	}
}
