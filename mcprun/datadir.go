package mcprun

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// DefaultDataHome is the parent of plugkit's per-plugin PLUGIN_DATA
// directories: $XDG_DATA_HOME/plugkit/data, or ~/.local/share/plugkit/data.
func DefaultDataHome() (string, error) {
	if x := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "plugkit", "data"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no data home: %w", err)
	}
	return filepath.Join(home, ".local", "share", "plugkit", "data"), nil
}

// dataDir picks PLUGIN_DATA: the explicit directory, or one per plugin
// name under the data home. The name is checked again here because a
// Package built by hand has not been through the loader, and a name like
// ".." would make two plugins share (or escape) the data home.
func dataDir(name string, opts PlanOptions) (string, error) {
	dir := opts.DataDir
	if dir == "" {
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`+"\x00") {
			return "", fmt.Errorf("%w: %q", ErrPluginName, name)
		}
		home := opts.DataHome
		if home == "" {
			var err error
			if home, err = DefaultDataHome(); err != nil {
				return "", err
			}
		}
		dir = filepath.Join(home, name)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return resolve(abs)
}
