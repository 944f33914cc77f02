package install

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDefaultDir: the home is $PLUGKIT_HOME, else $XDG_DATA_HOME/plugkit
// (an absolute XDG_DATA_HOME only, as the XDG specification says), else
// ~/.local/share/plugkit; with no home directory at all, the error says
// how to name one.
func TestDefaultDir(t *testing.T) {
	home := t.TempDir()
	for _, c := range []struct {
		plugkitHome, xdg, home string
		want, err              string
	}{
		{"/srv/plugkit", "/xdg", home, "/srv/plugkit", ""},
		{"", "/xdg", home, "/xdg/plugkit", ""},
		{"", "relative/xdg", home, filepath.Join(home, ".local", "share", "plugkit"), ""},
		{"", "", home, filepath.Join(home, ".local", "share", "plugkit"), ""},
		{"", "", "", "", "PLUGKIT_HOME or give --home"},
	} {
		t.Setenv("PLUGKIT_HOME", c.plugkitHome)
		t.Setenv("XDG_DATA_HOME", c.xdg)
		t.Setenv("HOME", c.home)
		got, err := DefaultDir()
		if got != c.want || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("PLUGKIT_HOME=%q XDG_DATA_HOME=%q HOME=%q: %q %v, want %q %q", c.plugkitHome, c.xdg, c.home, got, err, c.want, c.err)
		}
	}
}
