// Package testtree writes directory trees for tests from a compact
// description, so that tests of link handling read as a table.
package testtree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Write creates the entries below dir. Each key is a slash-separated path
// and says what to make by its last character:
//
//	"a/b"  a regular file holding the value, mode 0755 when the value
//	       starts with "#!", 0644 otherwise
//	"a/b@" a symbolic link to the value, exactly as written
//	"a/b|" a named pipe (the test is skipped where there are none)
//	"a/b/" an empty directory
//
// Parent directories are made as needed.
func Write(t testing.TB, dir string, entries map[string]string) {
	t.Helper()
	for name, v := range entries {
		p := filepath.Join(dir, filepath.FromSlash(strings.TrimRight(name, "@|/")))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case strings.HasSuffix(name, "@"):
			err = os.Symlink(v, p)
		case strings.HasSuffix(name, "|"):
			Mkfifo(t, p)
		case strings.HasSuffix(name, "/"):
			err = os.MkdirAll(p, 0o755)
		default:
			mode := os.FileMode(0o644)
			if strings.HasPrefix(v, "#!") {
				mode = 0o755
			}
			if err = os.WriteFile(p, []byte(v), mode); err == nil {
				err = os.Chmod(p, mode) // the umask may have narrowed it
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
