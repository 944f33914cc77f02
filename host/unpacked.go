package host

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/snapshot"
)

// Unpacked is the Plugin of pkg, a package loaded from an archive, an OCI
// artifact or a registry, whose files are only in memory: they are written
// to a new private directory below dir (os.TempDir() when dir is empty),
// because stdio servers run from files and PLUGIN_ROOT is a directory.
// The Plugin has no DataDir (the caller chooses one) and the given
// identity. remove deletes the directory; call it once the host no longer
// runs the plugin. On error nothing is left behind.
func Unpacked(pkg *agentplugin.Package, dir, identity string) (p Plugin, remove func() error, err error) {
	tmp, err := os.MkdirTemp(dir, "plugkit-run-")
	if err != nil {
		return Plugin{}, nil, fmt.Errorf("host: unpacking %s: %w", pkg.Name, err)
	}
	root := filepath.Join(tmp, pkg.Name)
	if err := snapshot.WriteDir(root, pkg.Snapshot); err != nil {
		os.RemoveAll(tmp)
		return Plugin{}, nil, fmt.Errorf("host: unpacking %s: %w", pkg.Name, err)
	}
	return Plugin{Package: pkg, Root: root, Identity: identity}, func() error { return os.RemoveAll(tmp) }, nil
}
