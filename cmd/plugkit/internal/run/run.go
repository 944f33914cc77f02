package run

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	homecmd "github.com/plugkit/plugkit/cmd/plugkit/internal/home"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/input"
	"github.com/plugkit/plugkit/host"
	"github.com/plugkit/plugkit/install"
	"github.com/plugkit/plugkit/install/hostplugins"
	"github.com/plugkit/plugkit/mcprun"
	"github.com/plugkit/plugkit/snapshot"
	"github.com/plugkit/plugkit/source"
)

// runFlags are the flags of every verb that runs plugins' MCP servers
// (mcp list, mcp call, gateway).
type runFlags struct {
	fac        *factory.Factory
	home       string
	config     string
	timeout    time.Duration
	transports string
	inheritEnv []string
}

func (f *runFlags) register(fac *factory.Factory, fs *pflag.FlagSet) {
	f.fac = fac
	fs.StringVar(&f.home, "home", "", "plugkit home (default: $PLUGKIT_HOME, else $XDG_DATA_HOME/plugkit, else ~/.local/share/plugkit)")
	fs.StringVar(&f.config, "config", "", "host configuration file with credentials for servers (default: HOME/host.json when it exists; see docs/runtime.md)")
	fs.DurationVar(&f.timeout, "timeout", host.DefaultCallTimeout, "time limit of every request to a server (handshake, each list page, each call)")
	fs.StringVar(&f.transports, "transports", "", "MCP transports to use, comma-separated (default: stdio,streamable-http,sse)")
	fs.StringArrayVar(&f.inheritEnv, "inherit-env", nil, "pass this variable of plugkit's environment to stdio servers too (NAME or PREFIX*; repeatable); by default they get only PATH, HOME, USER, LOGNAME, SHELL, TERM, LANG, LC_* and TMPDIR")
}

// homeDir is the plugkit home of this run; "" when there is none (no
// --home, PLUGKIT_HOME, XDG_DATA_HOME or HOME): then ad-hoc runs have no
// data directory, and only their stdio servers are skipped.
func (f *runFlags) homeDir() (string, error) {
	if f.home != "" {
		abs, err := filepath.Abs(f.home)
		if err != nil {
			return "", command.Usage(err)
		}
		return abs, nil
	}
	h, err := f.fac.Home("")
	if err != nil {
		return "", nil
	}
	return h, nil
}

// hostOptions turn the flags into host options.
func (f *runFlags) hostOptions(logger *slog.Logger) (host.Options, []agentplugin.Transport, error) {
	ts, err := input.ParseTransports(f.transports)
	if err != nil {
		return host.Options{}, nil, command.Usage(err)
	}
	if f.timeout <= 0 {
		return host.Options{}, nil, command.Usagef("--timeout must be positive, such as 30s")
	}
	if err := mcprun.CheckInheritEnv(f.inheritEnv); err != nil {
		return host.Options{}, nil, command.Usage(fmt.Errorf("--inherit-env: %w", err))
	}
	cfg, err := f.loadConfig()
	if err != nil {
		return host.Options{}, nil, err
	}
	o := host.Options{CallTimeout: f.timeout, Logger: logger, Overlays: cfg.Overlays}
	o.Launch.Transports = ts
	o.Launch.Subreaper = f.fac.Subreaper
	o.Launch.HandshakeTimeout = f.timeout
	o.Launch.InheritEnv = append(cfg.InheritEnv, f.inheritEnv...)
	return o, ts, nil
}

// loadConfig reads --config, or HOME/host.json when it exists.
func (f *runFlags) loadConfig() (*host.Config, error) {
	path := f.config
	if path == "" {
		home, err := f.homeDir()
		if err != nil || home == "" {
			return &host.Config{}, err
		}
		path = filepath.Join(home, "host.json")
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return &host.Config{}, nil
		}
	}
	c, err := host.LoadConfig(path)
	switch {
	case errors.Is(err, host.ErrConfig):
		return nil, command.Failed(err)
	case err != nil:
		return nil, command.Usage(err)
	}
	return c, nil
}

// openHome opens the plugkit home of this run; nil when there is none
// (no --home, PLUGKIT_HOME, XDG_DATA_HOME or HOME).
func (f *runFlags) openHome() (*install.Home, error) {
	dir, err := f.homeDir()
	if err != nil || dir == "" {
		return nil, err
	}
	return homecmd.Open(f.fac, dir)
}

// runnable is a plugin ready to run: loaded, and on disk.
type runnable struct {
	pkg *agentplugin.Package
	// root is the directory it runs from: the directory given, an
	// installed plugin's store tree, or a private unpacked copy.
	root string
	// dataDir is an installed plugin's PLUGIN_DATA; "" for an ad-hoc run,
	// whose data directory is keyed by location.
	dataDir  string
	location string
	// identity names the plugin's content, so that a reload can tell
	// whether it changed.
	identity string
	cleanup  func()
}

// openRunnable reads the plugin arg names for running: any source validate
// takes (a directory, an archive, oci://, oci-layout:, a registry plugin),
// or the name of a plugin installed in home. An installed plugin's tree is
// checked against its file list first, and refused if it was modified.
// A rejected or refused plugin is exit 1, an unreadable one exit 2.
func openRunnable(ctx context.Context, arg string, home *install.Home, load agentplugin.Options) (*runnable, error) {
	popts := source.ParseOptions{Installed: func(name string) bool {
		if home == nil {
			return false
		}
		_, err := home.Get(name)
		return err == nil
	}}
	src, err := source.Parse(arg, popts)
	if err != nil {
		return nil, command.Usage(err)
	}
	if src.Kind == source.Installed {
		return openInstalled(home, src.Name, load)
	}
	p, err := input.OpenSource(ctx, arg, popts, source.Options{Load: load})
	if err != nil {
		return nil, err
	}
	if p.Dir != "" {
		return &runnable{pkg: p.Package, root: p.Dir, location: p.Dir, identity: treeDigest(p.Package.Snapshot), cleanup: func() {}}, nil
	}
	location := src.String()
	if src.Kind == source.Path {
		location = src.Path
	}
	// Servers run from files: unpack a private copy, removed on exit.
	hp, remove, err := host.Unpacked(p.Package, "", p.Identity)
	if err != nil {
		return nil, command.Usage(fmt.Errorf("unpacking %s to run it: %w", arg, err))
	}
	return &runnable{pkg: p.Package, root: hp.Root, location: location, identity: p.Identity,
		cleanup: func() { remove() }}, nil
}

// openInstalled is an installed plugin, verified, from its store tree.
func openInstalled(home *install.Home, name string, load agentplugin.Options) (*runnable, error) {
	p, err := hostplugins.InstalledPlugin(home, name, load)
	if err != nil {
		return nil, homecmd.Error(err)
	}
	return &runnable{pkg: p.Package, root: p.Root, dataDir: p.DataDir, location: p.Root, identity: p.Identity, cleanup: func() {}}, nil
}

// treeDigest names the content of a snapshot: the sha256 of every path,
// mode and file digest, in order.
func treeDigest(s *snapshot.Snapshot) string {
	h := sha256.New()
	for _, p := range s.Paths() {
		sum := sha256.Sum256(s.Files[p])
		fmt.Fprintf(h, "%s\x00%o\x00%x\n", p, s.Mode(p), sum)
	}
	return "tree:sha256:" + hex.EncodeToString(h.Sum(nil))
}

// plugin is the host plugin of r: an installed plugin's own data
// directory, else dataDir when given, else the ad-hoc one keyed by
// location (none without a home: then only stdio servers are skipped).
func (r *runnable) plugin(home *install.Home, dataDir string) (host.Plugin, error) {
	switch {
	case dataDir != "":
	case r.dataDir != "":
		dataDir = r.dataDir
	case home != nil:
		var err error
		if dataDir, err = host.AdhocDataDir(home.Dir(), r.pkg.Name, r.location); err != nil {
			return host.Plugin{}, command.Usage(err)
		}
	}
	return host.Plugin{Package: r.pkg, Root: r.root, DataDir: dataDir, Identity: r.identity}, nil
}
