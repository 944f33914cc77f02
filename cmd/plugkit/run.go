package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/host"
	"github.com/plugkit/plugkit/mcprun"
	"github.com/plugkit/plugkit/snapshot"
)

// runFlags are the flags of every verb that runs plugins' MCP servers
// (mcp list, mcp call, gateway).
type runFlags struct {
	home       string
	config     string
	timeout    time.Duration
	transports string
	inheritEnv []string
}

func (f *runFlags) register(fs *pflag.FlagSet) {
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
			return "", usage(err)
		}
		return abs, nil
	}
	h, err := host.DefaultHome()
	if err != nil {
		return "", nil
	}
	return h, nil
}

// hostOptions turn the flags into host options. Subreaper is on: the CLI
// starts no process of its own besides servers, so every orphan it adopts
// is a server's, and ending them all on exit is right.
func (f *runFlags) hostOptions(logger *slog.Logger) (host.Options, []agentplugin.Transport, error) {
	ts, err := parseTransports(f.transports)
	if err != nil {
		return host.Options{}, nil, usage(err)
	}
	if f.timeout <= 0 {
		return host.Options{}, nil, usagef("--timeout must be positive, such as 30s")
	}
	if err := mcprun.CheckInheritEnv(f.inheritEnv); err != nil {
		return host.Options{}, nil, usage(fmt.Errorf("--inherit-env: %w", err))
	}
	cfg, err := f.loadConfig()
	if err != nil {
		return host.Options{}, nil, err
	}
	o := host.Options{CallTimeout: f.timeout, Logger: logger, Overlays: cfg.Overlays}
	o.Launch.Transports = ts
	o.Launch.Subreaper = true
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
		return nil, failed(err)
	case err != nil:
		return nil, usage(err)
	}
	return c, nil
}

// runnable is a plugin ready to run: loaded, and on disk.
type runnable struct {
	pkg *agentplugin.Package
	// root is the directory it runs from: the directory given, or a
	// private unpacked copy of an archive.
	root string
	// location is what the user named, which keys its ad-hoc data.
	location string
	cleanup  func()
}

// openRunnable loads the plugin at path (a directory or an archive file)
// for running. A rejected plugin is exit 1, an unreadable path exit 2.
func openRunnable(path string, opts agentplugin.Options) (*runnable, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, usage(err)
	}
	if fi.IsDir() {
		pkg, err := loadForRun(agentplugin.LoadDir(path, opts, snapshot.Options{}))
		if err != nil {
			return nil, err
		}
		return &runnable{pkg: pkg, root: path, location: path, cleanup: func() {}}, nil
	}
	snap, err := readArchiveFile(path)
	if err != nil {
		return nil, loadError(err)
	}
	pkg, err := loadForRun(agentplugin.Load(snap, opts))
	if err != nil {
		return nil, err
	}
	// Servers run from files: unpack a private copy, removed on exit.
	tmp, err := os.MkdirTemp("", "plugkit-run-")
	if err != nil {
		return nil, usage(err)
	}
	root := filepath.Join(tmp, pkg.Name)
	if err := snapshot.WriteDir(root, snap); err != nil {
		os.RemoveAll(tmp)
		return nil, usage(fmt.Errorf("unpacking %s to run it: %w", path, err))
	}
	return &runnable{pkg: pkg, root: root, location: path, cleanup: func() { os.RemoveAll(tmp) }}, nil
}

// loadForRun classifies a load's outcome for the exit code.
func loadForRun(pkg *agentplugin.Package, err error) (*agentplugin.Package, error) {
	if err != nil {
		return nil, loadError(err)
	}
	return pkg, nil
}

// loadError is exit 1 for a rejected or refused plugin, 2 for I/O.
func loadError(err error) error {
	var rej *agentplugin.RejectedError
	if errors.As(err, &rej) || isInputError(err) {
		return failed(err)
	}
	return usage(err)
}

// plugin is the host plugin of r, with its ad-hoc data directory unless
// dataDir is given (none when there is no home either).
func (r *runnable) plugin(home, dataDir string) (host.Plugin, error) {
	if dataDir == "" && home != "" {
		var err error
		if dataDir, err = host.AdhocDataDir(home, r.pkg.Name, r.location); err != nil {
			return host.Plugin{}, usage(err)
		}
	}
	return host.Plugin{Package: r.pkg, Root: r.root, DataDir: dataDir}, nil
}
