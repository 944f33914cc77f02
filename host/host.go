package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/mcprun"
)

// Plugin is one plugin a Host serves: a loaded package and where it is
// installed.
type Plugin struct {
	// Package is the loaded plugin; its name is the plugin's identity in
	// the host, so two plugins of one host never share a name.
	Package *agentplugin.Package
	// Root is the directory the plugin is installed in: PLUGIN_ROOT, and
	// where its ./ commands are found.
	Root string
	// DataDir is the plugin's PLUGIN_DATA. Without one, its stdio servers
	// are skipped (mcprun.ErrNoDataDir); skills and remote servers work.
	DataDir string
	// Identity names this content of the plugin, such as its archive
	// digest. Set keeps a plugin's running servers only when its Identity
	// is the same non-empty string as before (and Root and DataDir are
	// unchanged); any other plugin given to Set is restarted.
	Identity string
}

// Options configure a Host. The zero value works: servers start when
// first needed, with the default timeouts and limits and no overlays.
type Options struct {
	// Launch is the template every server is started with (timeouts,
	// transports, InheritEnv, Subreaper, HTTPTransport, ...). Root,
	// DataDir, HostHeaders, HostEnv and Client are the host's to set (from
	// each Plugin, from Overlays, its own client): New refuses a template
	// that sets them, rather than override them unseen.
	Launch mcprun.StartOptions
	// Overlays are the host's credentials for servers, never part of a
	// plugin (see LoadConfig).
	Overlays Overlays
	// CallTimeout bounds every request to a server: each page of a list,
	// each tool call, prompt and resource read. Default DefaultCallTimeout.
	CallTimeout time.Duration
	// Limits bound what the host accepts from a server's lists.
	Limits Limits
	// MinBackoff and MaxBackoff bound the wait before restarting a server
	// that failed or exited: the first restart is immediate, the next ones
	// wait MinBackoff, then twice as long each time, at most MaxBackoff.
	// A server that stayed up for MaxBackoff starts the count again.
	// Defaults DefaultMinBackoff and DefaultMaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// Logger receives what happens to servers (started, failed, exited,
	// restarted) and to the set of plugins. Values of overlays are never
	// logged. Nil discards.
	Logger *slog.Logger
	// OnChange is called, on its own goroutine, after the lists the host
	// offers changed: plugins added, updated or removed by Set, or a
	// server announcing new tools, prompts or resources.
	OnChange func(Change)
}

// Defaults of Options.
const (
	DefaultCallTimeout = 30 * time.Second
	DefaultMinBackoff  = time.Second
	DefaultMaxBackoff  = time.Minute
	DefaultMaxPages    = 100
	DefaultMaxItems    = 10_000
)

// Limits bound a server's lists. A zero field takes its default.
type Limits struct {
	// MaxPages is the most pages one list may take (default 100): a
	// server that always answers with another cursor is cut off there.
	MaxPages int
	// MaxItems is the most tools (prompts, resources, templates) one
	// server may list (default 10,000).
	MaxItems int
}

// Overlays are credentials the host lays over plugins' server
// configurations, keyed by server ID ("PLUGIN/SERVER"): headers replace
// configured headers of the same name (case-insensitively), env values
// the configured env. LoadConfig reads them from a file.
type Overlays struct {
	Headers map[string]http.Header
	Env     map[string]map[string]string
}

// Change says what changed in the lists a Host offers.
type Change struct {
	// Added, Updated and Removed name the plugins Set changed.
	Added, Updated, Removed []string
	// Tools, Prompts and Resources tell which lists may differ now.
	Tools, Prompts, Resources bool
}

// empty reports whether nothing changed.
func (c Change) empty() bool { return !c.Tools && !c.Prompts && !c.Resources }

// Host serves the skills and MCP servers of a set of plugins. Its methods
// are safe for concurrent use.
type Host struct {
	opts   Options
	client *mcp.Client
	life   context.Context // canceled by Close: aborts starts in progress
	stop   context.CancelFunc

	mu       sync.RWMutex
	plugins  map[string]*plugin
	closed   bool
	sessions sync.Map // *mcp.ClientSession → *server, for notifications
}

// plugin is one Plugin inside the host.
type plugin struct {
	Plugin
	servers []*server // in the package's order (sorted by name)
}

// New returns a host serving plugins. It starts nothing: a server starts
// when it is first needed (a list or a call that concerns it), or when
// Start is called. Two plugins with the same name are an error
// (ErrDuplicate).
func New(plugins []Plugin, opts Options) (*Host, error) {
	if err := checkPlugins(plugins); err != nil {
		return nil, err
	}
	if err := checkLaunch(opts.Launch); err != nil {
		return nil, err
	}
	opts.defaults()
	h := &Host{opts: opts, plugins: map[string]*plugin{}}
	h.life, h.stop = context.WithCancel(context.Background())
	h.client = mcp.NewClient(&mcp.Implementation{Name: "plugkit", Version: "1.0.0"}, &mcp.ClientOptions{
		ToolListChangedHandler:     func(_ context.Context, r *mcp.ToolListChangedRequest) { h.listChanged(r.Session, kindTools) },
		PromptListChangedHandler:   func(_ context.Context, r *mcp.PromptListChangedRequest) { h.listChanged(r.Session, kindPrompts) },
		ResourceListChangedHandler: func(_ context.Context, r *mcp.ResourceListChangedRequest) { h.listChanged(r.Session, kindResources) },
	})
	for _, p := range plugins {
		h.plugins[p.Package.Name] = h.newPlugin(p)
	}
	return h, nil
}

func (o *Options) defaults() {
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.Limits.MaxPages <= 0 {
		o.Limits.MaxPages = DefaultMaxPages
	}
	if o.Limits.MaxItems <= 0 {
		o.Limits.MaxItems = DefaultMaxItems
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(DefaultMaxBackoff, o.MinBackoff)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
}

// checkPlugins refuses a set of plugins the host cannot serve.
func checkPlugins(plugins []Plugin) error {
	seen := map[string]bool{}
	for _, p := range plugins {
		switch {
		case p.Package == nil:
			return errors.New("host: plugin without a package")
		case p.Root == "":
			return fmt.Errorf("host: plugin %s: no root directory", p.Package.Name)
		case seen[p.Package.Name]:
			return fmt.Errorf("%w: %s", ErrDuplicate, p.Package.Name)
		}
		seen[p.Package.Name] = true
	}
	return nil
}

// newPlugin builds the servers of p, not started.
func (h *Host) newPlugin(p Plugin) *plugin {
	pl := &plugin{Plugin: p}
	launch := h.opts.Launch
	launch.Root, launch.DataDir, launch.Client = p.Root, p.DataDir, h.client
	launch.HostHeaders, launch.HostEnv = h.opts.Overlays.Headers, h.opts.Overlays.Env
	for _, def := range p.Package.Servers {
		s := &server{h: h, plugin: pl, def: def, launch: launch}
		for k := range s.lists {
			s.lists[k].fetch = make(gate, 1)
		}
		pl.servers = append(pl.servers, s)
	}
	return pl
}

// Set replaces the plugins the host serves, as an installer changes them:
// plugins no longer listed are removed and their servers closed, plugins
// whose content changed (see Plugin.Identity) are restarted, new ones
// added. Nothing changes when the set is refused (two plugins with one
// name). OnChange hears of any difference.
func (h *Host) Set(plugins []Plugin) (Change, error) {
	if err := checkPlugins(plugins); err != nil {
		return Change{}, err
	}
	next := map[string]Plugin{}
	for _, p := range plugins {
		next[p.Package.Name] = p
	}
	var ch Change
	var retired []*server
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return Change{}, ErrClosed
	}
	for _, name := range slices.Sorted(maps.Keys(h.plugins)) {
		old := h.plugins[name]
		p, keep := next[name]
		switch {
		case !keep:
			ch.Removed = append(ch.Removed, name)
		case samePlugin(old.Plugin, p):
			delete(next, name)
			continue
		default:
			ch.Updated = append(ch.Updated, name)
			h.plugins[name] = h.newPlugin(p)
			delete(next, name)
		}
		retired = append(retired, old.servers...)
		if !keep {
			delete(h.plugins, name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(next)) {
		ch.Added = append(ch.Added, name)
		h.plugins[name] = h.newPlugin(next[name])
	}
	h.mu.Unlock()

	closeServers(retired)
	if len(ch.Added)+len(ch.Updated)+len(ch.Removed) > 0 {
		ch.Tools, ch.Prompts, ch.Resources = true, true, true
		h.opts.Logger.Info("plugins changed", "added", ch.Added, "updated", ch.Updated, "removed", ch.Removed)
		h.changed(ch)
	}
	return ch, nil
}

// samePlugin reports whether b is the plugin a already is.
func samePlugin(a, b Plugin) bool {
	return a.Identity != "" && a.Identity == b.Identity && a.Root == b.Root && a.DataDir == b.DataDir
}

// changed tells OnChange, off the caller's goroutine so that a slow
// listener cannot hold up a list or a Set.
func (h *Host) changed(c Change) {
	if h.opts.OnChange != nil && !c.empty() {
		go h.opts.OnChange(c)
	}
}

// Plugins lists the plugins the host serves, sorted by name.
func (h *Host) Plugins() []Plugin {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make([]Plugin, 0, len(h.plugins))
	for _, name := range slices.Sorted(maps.Keys(h.plugins)) {
		out = append(out, h.plugins[name].Plugin)
	}
	return out
}

// servers returns every server of every plugin, sorted by ID.
func (h *Host) servers() []*server {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var out []*server
	for _, name := range slices.Sorted(maps.Keys(h.plugins)) {
		out = append(out, h.plugins[name].servers...)
	}
	return out
}

// server returns the server with the given ID, PLUGIN/SERVER.
func (h *Host) server(id string) (*server, error) {
	if err := h.open(); err != nil {
		return nil, err
	}
	plugin, name, _ := strings.Cut(id, "/") // neither name holds a "/"
	if s := h.serverNamed(plugin, name); s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("%w: no MCP server %q", ErrNotFound, id)
}

// serverNamed returns the server name of the plugin called plugin, or nil.
func (h *Host) serverNamed(plugin, name string) *server {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if p := h.plugins[plugin]; p != nil {
		for _, s := range p.servers {
			if s.def.Name == name {
				return s
			}
		}
	}
	return nil
}

// Start starts every server not started yet, concurrently, and returns
// when each is ready, skipped or failed: the eager alternative to starting
// each one when it is first needed. The statuses are also in Servers.
func (h *Host) Start(ctx context.Context) []ServerStatus {
	eachServer(h.servers(), func(s *server) { s.session(ctx) })
	return h.Servers()
}

// Servers reports every server of every plugin, sorted by ID.
func (h *Host) Servers() []ServerStatus {
	srvs := h.servers()
	out := make([]ServerStatus, len(srvs))
	for i, s := range srvs {
		out[i] = s.status()
	}
	return out
}

// Close closes every server (mcprun.Conn.Close: sessions ended, process
// groups and escaped descendants killed) and refuses every later request.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	var all []*server
	for _, p := range h.plugins {
		all = append(all, p.servers...)
	}
	h.mu.Unlock()
	h.stop()
	return closeServers(all)
}

// closeServers closes servers concurrently.
func closeServers(srvs []*server) error {
	errs := make([]error, len(srvs))
	var wg sync.WaitGroup
	for i, s := range srvs {
		wg.Go(func() { errs[i] = s.close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// maxParallel bounds how many servers one request starts or lists at once.
const maxParallel = 32

// eachServer runs f for every server, at most maxParallel at a time.
func eachServer(srvs []*server, f func(*server)) {
	sem := make(chan struct{}, maxParallel)
	var wg sync.WaitGroup
	for _, s := range srvs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f(s)
		})
	}
	wg.Wait()
}

// listChanged handles a server's list_changed notification.
func (h *Host) listChanged(sess *mcp.ClientSession, k kind) {
	v, ok := h.sessions.Load(sess)
	if !ok {
		return
	}
	v.(*server).invalidate(k)
	h.changed(changeOf(k))
}

// ErrLaunchField is matched by New's error about a Launch template that
// sets a field the host sets itself.
var ErrLaunchField = errors.New("host: Options.Launch sets a field the host sets itself")

// checkLaunch refuses a Launch template that sets what the host sets per
// server.
func checkLaunch(l mcprun.StartOptions) error {
	for field, set := range map[string]bool{
		"Root (Plugin.Root)":       l.Root != "",
		"DataDir (Plugin.DataDir)": l.DataDir != "",
		"HostHeaders (Overlays)":   l.HostHeaders != nil,
		"HostEnv (Overlays)":       l.HostEnv != nil,
		"Client (the host's own)":  l.Client != nil,
	} {
		if set {
			return fmt.Errorf("%w: %s: leave it zero", ErrLaunchField, field)
		}
	}
	return nil
}

// LoadPlugin loads the plugin directory dir as a Plugin of a host: its
// package, with dir as its Root. Give it a DataDir for its stdio servers
// to run, and an Identity for Set to keep its servers across reloads.
func LoadPlugin(dir string, opts agentplugin.Options) (Plugin, error) {
	pkg, err := agentplugin.LoadDir(dir, opts)
	if err != nil {
		return Plugin{}, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Plugin{}, err
	}
	return Plugin{Package: pkg, Root: abs}, nil
}
