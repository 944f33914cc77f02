package host

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrDataDir is matched by the errors of AdhocDataDir and DefaultHome.
var ErrDataDir = errors.New("no PLUGIN_DATA directory")

// DefaultHome is plugkit's home directory, the parent of installed
// plugins' data (HOME/data/NAME) and of ad-hoc runs' (HOME/adhoc):
// $PLUGKIT_HOME, else $XDG_DATA_HOME/plugkit, else ~/.local/share/plugkit.
func DefaultHome() (string, error) {
	if h := os.Getenv("PLUGKIT_HOME"); h != "" {
		return filepath.Abs(h)
	}
	if x := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "plugkit"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("%w: no PLUGKIT_HOME, XDG_DATA_HOME or HOME to put it in", ErrDataDir)
	}
	return filepath.Join(home, ".local", "share", "plugkit"), nil
}

// AdhocDataDir is the PLUGIN_DATA directory of a plugin that runs without
// being installed (plugkit mcp on a directory or an archive):
// HOME/adhoc/NAME-HEX, HEX the first 12 hexadecimal digits of the sha256 of
// the plugin's location (the directory or archive it was read from,
// absolute, links resolved). Keyed by location as well as by name, so that
// another directory declaring the same name never gets this plugin's data,
// and apart from HOME/data, where installed plugins keep theirs.
func AdhocDataDir(home, name, location string) (string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`+"\x00") {
		return "", fmt.Errorf("%w: plugin name %q cannot name a directory", ErrDataDir, name)
	}
	abs, err := filepath.Abs(location)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(real))
	return filepath.Join(home, "adhoc", name+"-"+hex.EncodeToString(sum[:])[:12]), nil
}
