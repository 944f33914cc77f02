package mcprun

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/plugkit/plugkit/agentplugin"
)

// PlanOptions say where a plugin lives and how its servers are reached.
// Only Root is required; stdio servers also need DataDir.
type PlanOptions struct {
	// Root is the installed plugin root on disk. It is resolved through
	// links to become PLUGIN_ROOT.
	Root string
	// DataDir is this plugin's PLUGIN_DATA directory, which the client
	// chooses (spec section 9.1): one per installed plugin, kept across
	// updates. Without one a stdio server cannot be planned (ErrNoDataDir)
	// while remote servers, which get no environment, still can.
	DataDir string
	// BaseEnv is the environment stdio servers start from, used as is when
	// not nil. When nil it is the client's own environment reduced to
	// DefaultInheritedEnv and InheritEnv, so that tokens and credentials
	// in the client's environment never reach a plugin's process.
	BaseEnv []string
	// InheritEnv names more variables of the client's environment to pass
	// to stdio servers when BaseEnv is nil: exact names, or prefixes ending
	// in "*" (see CheckInheritEnv).
	InheritEnv []string
	// LookPath resolves a bare command name; nil is exec.LookPath, which
	// searches the client's own PATH, never a PATH the plugin configures.
	LookPath func(name string) (string, error)
	// HostHeaders are headers the host supplies per server ID
	// ("PLUGIN/SERVER"), typically credentials. They replace configured
	// headers of the same name, case-insensitively.
	HostHeaders map[string]http.Header
	// HostEnv are environment variables the host supplies per stdio server
	// ID, typically credentials. They are laid over the configured env
	// (after its expansion; host values are never expanded) and under the
	// reserved PLUGIN_ROOT and PLUGIN_DATA, which they may not name.
	HostEnv map[string]map[string]string
	// FollowCrossOrigin allows a redirect or a legacy SSE endpoint event
	// to another origin; such requests never carry configured or host
	// headers. The default refuses them with ErrCrossOrigin.
	FollowCrossOrigin bool
	// HTTPTransport is the RoundTripper under the header policy; nil is
	// http.DefaultTransport.
	HTTPTransport http.RoundTripper
}

// LaunchPlan is how one server will be reached. For stdio, Path, Args,
// Env and Dir are ready for exec.Cmd (see Cmd); for streamable-http and
// sse, URL and Client are.
type LaunchPlan struct {
	// ServerID and Type are the server's, as configured.
	ServerID string
	Type     agentplugin.Transport
	// Root and DataDir are PLUGIN_ROOT and PLUGIN_DATA: absolute, with
	// links resolved (DataDir as far as it exists yet; empty for remote
	// servers).
	Root    string
	DataDir string

	// Path is the executable; Args its argv, Args[0] the command as
	// invoked; Env the complete environment; Dir the working directory.
	Path string
	Args []string
	Env  []string
	Dir  string

	// URL is the endpoint exactly as configured. Header holds the
	// configured headers with the host's laid over them; it is sent only
	// to URL's origin, by Client, and is never printed by plugkit.
	URL    string
	Header http.Header
	Client *http.Client

	server agentplugin.Server
	opts   PlanOptions
}

// Plan makes the launch plan of one server of pkg, applying every rule of
// spec sections 4.1, 7.2.1 and 9 that can be judged before launch. It reads
// the filesystem but changes nothing: PLUGIN_DATA is created by Prepare.
//
// An error matching ErrInvalidServer means the server entry is invalid
// and must be skipped (section 7.2.2); others (ErrNotFound, I/O errors)
// mean it cannot be started here.
func Plan(pkg *agentplugin.Package, srv agentplugin.Server, opts PlanOptions) (*LaunchPlan, error) {
	if pkg == nil {
		return nil, errors.New("mcprun: nil package")
	}
	p := &LaunchPlan{ServerID: srv.ID, Type: srv.Type, server: srv, opts: opts}
	var err error
	if p.Root, err = resolveRoot(opts.Root); err != nil {
		return nil, err
	}
	switch srv.Type {
	case agentplugin.Stdio:
		if p.DataDir, err = dataDir(opts.DataDir); err == nil {
			err = p.planStdio()
		}
	case agentplugin.StreamableHTTP, agentplugin.SSE:
		err = p.planHTTP()
	default:
		err = fmt.Errorf("type %q: %w", srv.Type, ErrUnsupportedTransport)
	}
	if err != nil {
		return nil, fmt.Errorf("server %s: %w", srv.ID, err)
	}
	return p, nil
}

// resolveRoot makes the root absolute and link-resolved (section 9.1's
// "filesystem-resolved plugin root").
func resolveRoot(root string) (string, error) {
	if root == "" {
		return "", errors.New("mcprun: PlanOptions.Root is required")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("plugin root: %w", err)
	}
	return real, nil
}

func (p *LaunchPlan) planStdio() error {
	s := p.server
	e := newExpander(p.Root, p.DataDir)
	lookPath := p.opts.LookPath
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	path, argv0, err := resolveCommand(s.Command, p.Root, lookPath)
	if err != nil {
		return err
	}
	dir, err := resolveCwd(s.Cwd, p.Root, p.DataDir, e)
	if err != nil {
		return err
	}
	base := p.opts.BaseEnv
	if base == nil {
		base = inheritedEnv(os.Environ(), append(slices.Clip(defaultInherited), p.opts.InheritEnv...))
	}
	env, err := buildEnv(base, s.Env, p.opts.HostEnv[s.ID], p.Root, p.DataDir, e)
	if err != nil {
		return err
	}
	args := make([]string, 0, len(s.Args)+1)
	args = append(args, argv0)
	for _, a := range s.Args {
		args = append(args, e.expand(a))
	}
	p.Path, p.Args, p.Env, p.Dir = path, args, env, dir
	return nil
}

func (p *LaunchPlan) planHTTP() error {
	s := p.server
	u, err := url.Parse(s.URL)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	if err := checkURL(u); err != nil {
		return err
	}
	h, err := mergeHeaders(s.Headers, p.opts.HostHeaders[s.ID])
	if err != nil {
		return err
	}
	p.URL, p.Header = s.URL, h
	p.Client = newHTTPClient(u, h, p.opts.FollowCrossOrigin, p.opts.HTTPTransport)
	return nil
}

// Prepare creates PLUGIN_DATA (mode 0700, with any missing parents) and
// then checks the stdio plan again against the filesystem as it is now: a
// link may have been swapped since Plan, and a ${PLUGIN_DATA} cwd can only
// be fully resolved once the directory exists. Start calls it right before
// launching; call it yourself when you build the exec.Cmd with Cmd.
//
// It does nothing for remote servers: PLUGIN_DATA is part of a
// subprocess's environment (section 9.1), and a remote server has none.
func (p *LaunchPlan) Prepare() error {
	if p.Type != agentplugin.Stdio {
		return nil
	}
	if err := os.MkdirAll(p.DataDir, 0o700); err != nil {
		return fmt.Errorf("server %s: creating PLUGIN_DATA: %w", p.ServerID, err)
	}
	data, err := filepath.EvalSymlinks(p.DataDir)
	if err != nil {
		return fmt.Errorf("server %s: PLUGIN_DATA: %w", p.ServerID, err)
	}
	again := *p
	again.DataDir = data
	if err := again.planStdio(); err != nil {
		return fmt.Errorf("server %s: %w", p.ServerID, err)
	}
	// Keep the environment and args of the first plan (they expand the
	// same data path, as the host configured it); take only what the
	// filesystem decides.
	p.Path, p.Dir = again.Path, again.Dir
	return nil
}

// Cmd returns a new exec.Cmd for a stdio plan, in a process group of its
// own so that Runtime.Close (or the caller) can end every process the
// server starts, and on Linux with SIGKILL as its parent-death signal.
// Standard streams are left for the caller to connect.
func (p *LaunchPlan) Cmd() *exec.Cmd {
	cmd := &exec.Cmd{Path: p.Path, Args: slices.Clone(p.Args), Env: slices.Clone(p.Env), Dir: p.Dir}
	setProcAttr(cmd)
	return cmd
}
