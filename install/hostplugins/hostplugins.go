// Package hostplugins gives a Go agent host (package host, plugkit
// gateway) the plugins installed in a plugkit home, each checked as
// install.Home.Load checks it before it runs. It is apart from package
// host so that a host that never reads a plugkit home does not link the
// installer (and the signature verification it carries).
package hostplugins

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/host"
	"github.com/plugkit/plugkit/install"
)

// InstalledPlugin is the plugin called name installed in home, ready for a
// host: its store tree is checked against its file list and loaded, and
// refused when it was modified or holds another plugin or launch surface
// than the lock records (install.Home.Load); it
// runs from that tree with the home's data directory for it, and its
// Identity is the installation's.
func InstalledPlugin(home *install.Home, name string, opts agentplugin.Options) (host.Plugin, error) {
	in, err := home.Get(name)
	if err != nil {
		return host.Plugin{}, err
	}
	return loadInstalled(home, in, opts)
}

func loadInstalled(home *install.Home, in *install.Installed, opts agentplugin.Options) (host.Plugin, error) {
	pkg, err := home.Load(in, opts)
	if err != nil {
		return host.Plugin{}, fmt.Errorf("installed plugin %s: %w", in.Name, err)
	}
	return host.Plugin{Package: pkg, Root: in.Path, DataDir: in.DataDir, Identity: in.Identity}, nil
}

// HomePlugins keeps the plugins installed in a home loaded for a host:
// each Load reads the lock file and loads, verified, only the plugins
// whose installation changed since the previous Load.
type HomePlugins struct {
	home   *install.Home
	opts   agentplugin.Options
	loaded map[string]host.Plugin // by name, from the previous Load
}

// NewHomePlugins returns the loader of home's plugins; opts are the
// loader's options for each of them.
func NewHomePlugins(home *install.Home, opts agentplugin.Options) *HomePlugins {
	return &HomePlugins{home: home, opts: opts, loaded: map[string]host.Plugin{}}
}

// Load returns every installed plugin that verifies and loads, and an
// error for each one that does not (a modified tree, a tree whose plugin
// or launch surface is not the lock's, a plugin the loader now rejects): a
// host serves the others. The error alone is for a lock
// file that cannot be read.
func (l *HomePlugins) Load() ([]host.Plugin, []error, error) {
	list, err := l.home.List()
	if err != nil {
		return nil, nil, err
	}
	// Verifying and loading is file I/O and hashing: spread it over the
	// CPUs, keeping the lock's order.
	plugins := make([]host.Plugin, len(list))
	failures := make([]error, len(list))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i := range list {
		in := &list[i]
		if p, ok := l.loaded[in.Name]; ok && p.Identity == in.Identity && p.Root == in.Path {
			plugins[i] = p
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			plugins[i], failures[i] = loadInstalled(l.home, in, l.opts)
		})
	}
	wg.Wait()
	var out []host.Plugin
	var errs []error
	next := map[string]host.Plugin{}
	for i, p := range plugins {
		if failures[i] != nil {
			errs = append(errs, failures[i])
			continue
		}
		next[p.Package.Name] = p
		out = append(out, p)
	}
	l.loaded = next
	return out, errs, nil
}
