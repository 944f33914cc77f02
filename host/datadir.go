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

// ErrDataDir is matched by the errors of AdhocDataDir.
var ErrDataDir = errors.New("no PLUGIN_DATA directory")

// AdhocDataDir is the PLUGIN_DATA directory of a plugin that runs without
// being installed (plugkit mcp or gateway on a directory, an archive or an
// artifact): HOME/adhoc/NAME-HEX, HEX the first 12 hexadecimal digits of
// the sha256 of the plugin's location. A location that exists on disk
// (the directory or archive file) is made absolute with links resolved;
// any other (an oci:// reference, a registry plugin) is taken as given.
// Keyed by location as well as by name, so that another directory
// declaring the same name never gets this plugin's data, and apart from
// HOME/data, where installed plugins keep theirs.
func AdhocDataDir(home, name, location string) (string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`+"\x00") {
		return "", fmt.Errorf("%w: plugin name %q cannot name a directory", ErrDataDir, name)
	}
	key := location
	if _, err := os.Lstat(location); err == nil {
		abs, err := filepath.Abs(location)
		if err != nil {
			return "", err
		}
		if key, err = filepath.EvalSymlinks(abs); err != nil {
			return "", err
		}
	}
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(home, "adhoc", name+"-"+hex.EncodeToString(sum[:])[:12]), nil
}
