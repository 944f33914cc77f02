package build

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/plugkit/plugkit/archive"
)

func TestDigestVerb(t *testing.T) {
	file := filepath.Join(t.TempDir(), "x.tar.gz")
	os.WriteFile(file, []byte("hello\n"), 0o644)
	want := archive.Digest([]byte("hello\n"))
	if code, stdout, _ := runCLI(t, "digest", file); code != 0 || stdout != want+"\n" {
		t.Errorf("exit %d, %q", code, stdout)
	}
	code, stdout, _ := runCLI(t, "digest", file, "--json")
	var res struct {
		Digest, Path string
		Size         int64
	}
	if err := json.Unmarshal([]byte(stdout), &res); code != 0 || err != nil || res.Digest != want || res.Size != 6 || res.Path != file {
		t.Errorf("exit %d, %q (%v)", code, stdout, err)
	}
	if code, _, _ := runCLI(t, "digest", file+".missing"); code != 2 {
		t.Errorf("missing file: exit %d", code)
	}
}
