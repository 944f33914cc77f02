package mcprun

import (
	"path/filepath"
)

// dataDir makes the chosen PLUGIN_DATA absolute and resolves it as far as
// it exists. Choosing it is the client's business (spec section 9.1): an
// installer keys it by installed plugin, an ad-hoc run by the plugin's
// location, so mcprun never derives one from the plugin's name alone.
func dataDir(dir string) (string, error) {
	if dir == "" {
		return "", ErrNoDataDir
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return resolve(abs)
}
