package run

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	homecmd "github.com/plugkit/plugkit/cmd/plugkit/internal/home"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/httpserve"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/memory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/remote"
	"github.com/plugkit/plugkit/host"
	"github.com/plugkit/plugkit/install"
	"github.com/plugkit/plugkit/install/hostplugins"
	"github.com/plugkit/plugkit/internal/terminal"
)

// gatewayTokenEnv is the environment variable holding the HTTP bearer
// token.
const gatewayTokenEnv = "PLUGKIT_GATEWAY_TOKEN"

// gatewayFlags are the flags of plugkit gateway.
type gatewayFlags struct {
	run       runFlags
	httpAddr  string
	tokenFile string
	origins   []string
	eager     bool
	watch     time.Duration
	bodyTime  time.Duration
}

// NewCmdGateway builds plugkit gateway, which runs with fac.
func NewCmdGateway(fac *factory.Factory) *cobra.Command {
	var f gatewayFlags
	cmd := &cobra.Command{
		Use:   "gateway [PLUGIN...]",
		Short: "Serve installed plugins to any MCP client as one MCP server",
		Long: `Gateway is one MCP server that serves plugins to any MCP client (Claude
Desktop, Cursor, VS Code, the MCP Inspector): every tool of every plugin's MCP
servers under one stable name (PLUGIN_SERVER_TOOL, see docs/runtime.md), every
skill as a prompt named PLUGIN/SKILL, every file of a skill as a resource
skill://PLUGIN/SKILL/PATH, and the servers' own prompts and resources.

Without PLUGIN arguments it serves the plugins installed in the home
(plugkit install): installing, updating or removing one while it runs
updates it without a restart, and clients get notifications/tools/list_changed
(and the prompts and resources equivalents). Each installed plugin's files
are checked against its install record first; a modified one is refused.
With PLUGIN arguments (directories, archives, oci:// references, registry
plugins or installed names) it serves those; SIGHUP reads them again.

Servers start when a client first needs them (--eager starts them all at
once), a server that exits is reported on stderr and restarted on the next
call with a bounded backoff, and every request has --timeout.

It speaks MCP over stdio by default. With --http ADDR it serves Streamable
HTTP at http://ADDR/mcp; a bearer token (--token-file FILE, or
PLUGKIT_GATEWAY_TOKEN) is required when ADDR is not a loopback address, and
checked whenever one is given; a loopback address needs none. A browser's
request is served only from its own origin (an Origin header of http://
and the request's Host) or one that --allow-origin names (the MCP Inspector
runs at http://localhost:6274); any other Origin, "null" included, gets
403, and a request without one (a client that is not a browser) is served.

Like serve, it is a server: it stops on the first SIGINT or SIGTERM, or at
the end of its input on stdio, after the calls in flight, and exits 0. No
process of any server outlives it. Logs go to stderr.

To add it to an MCP client, put this in the client's MCP configuration:

  {"mcpServers": {"plugkit": {"command": "plugkit", "args": ["gateway"]}}}`,
		Example: `  plugkit gateway
  plugkit gateway ./my-plugin ./other-plugin.tar.gz
  plugkit gateway --http 127.0.0.1:8765
  plugkit gateway --http 127.0.0.1:8765 --allow-origin http://localhost:6274
  PLUGKIT_GATEWAY_TOKEN=$(cat ~/.gateway-token) plugkit gateway --http 0.0.0.0:8765`,
		RunE: func(cmd *cobra.Command, args []string) error { return runGateway(cmd, &f, args) },
	}
	f.run.register(fac, cmd.Flags())
	cmd.Flags().StringVar(&f.httpAddr, "http", "", "serve Streamable HTTP at http://ADDR/mcp instead of stdio, such as 127.0.0.1:8765")
	cmd.Flags().StringVar(&f.tokenFile, "token-file", "", "file holding the bearer token HTTP clients must send (default: $"+gatewayTokenEnv+")")
	cmd.Flags().StringArrayVar(&f.origins, "allow-origin", nil, "an Origin (scheme://host[:port]) whose browser pages may call the --http gateway besides its own; repeatable")
	cmd.Flags().BoolVar(&f.eager, "eager", false, "start every server at once instead of when a client first needs it")
	cmd.Flags().DurationVar(&f.watch, "watch-interval", time.Second, "how often to look for plugins installed, updated or removed")
	cmd.Flags().DurationVar(&f.bodyTime, "http-body-timeout", 30*time.Second, "time an HTTP client has to send a request's body (slower clients are cut off)")
	return cmd
}

// gatewayGCPercent is the gateway's garbage collection target (GOGC)
// unless the environment sets one. The MCP SDK allocates a 32 KiB buffer
// for every JSON message it decodes, several per call it answers (every
// call over HTTP; over stdio, tool calls are relayed without it), so with
// Go's default of 100 the gateway collected its small heap every few
// dozen calls, and collecting cost as much CPU as answering: at 400 it
// spends half the CPU per call, for a heap that may grow to five times
// what is live instead of twice.
const gatewayGCPercent = 400

func runGateway(cmd *cobra.Command, f *gatewayFlags, args []string) error {
	ctx := cmd.Context()
	defer memory.GCPercent(gatewayGCPercent)()
	token, err := f.token()
	if err != nil {
		return err
	}
	origins, err := checkOrigins(f.origins)
	if err != nil {
		return err
	}
	if len(origins) > 0 && f.httpAddr == "" {
		return command.Usagef("--allow-origin is for --http; a stdio gateway has no browser clients")
	}
	if f.watch <= 0 || f.bodyTime <= 0 {
		return command.Usagef("--watch-interval and --http-body-timeout must be positive, such as 1s")
	}
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
	opts, ts, err := f.run.hostOptions(log)
	if err != nil {
		return err
	}
	home, err := f.run.openHome()
	if err != nil {
		return err
	}
	src := &gatewaySource{args: args, home: home, load: agentplugin.Options{Transports: ts}, log: log, current: map[string]*runnable{}}
	var plugins []host.Plugin
	if len(args) == 0 {
		if home == nil {
			return command.Usagef("no plugin home (set --home or PLUGKIT_HOME) and no PLUGIN arguments")
		}
		// A home that cannot be read stops the gateway here; its plugins
		// are verified and loaded once it answers clients (watch).
		if _, err := home.List(); err != nil {
			return homecmd.Error(err)
		}
		src.installed = hostplugins.NewHomePlugins(home, src.load)
	} else if plugins, _, err = src.plugins(ctx); err != nil {
		return err
	}
	var gw *host.Gateway
	// The changes Set makes are told to clients by reload, after it, and
	// the first one never (no client has seen a list yet); OnChange only
	// relays what servers announce.
	opts.OnChange = func(c host.Change) {
		if len(c.Added)+len(c.Updated)+len(c.Removed) == 0 {
			gw.Notify(c)
		}
	}
	h, err := host.New(plugins, opts)
	if err != nil {
		src.cleanup()
		return command.Failed(err)
	}
	ready := make(chan struct{})
	gw = host.NewGateway(h, host.GatewayOptions{Ready: ready})
	wctx, stop := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		src.watch(wctx, h, gw, f.watch, ready)
	}()
	// The watcher stops before the host closes and the unpacked plugins
	// go: a reload must not race with either.
	defer func() {
		stop()
		<-watched
		h.Close()
		src.cleanup()
	}()
	if src.installed != nil {
		log.Info("gateway ready; loading the installed plugins", "home", home.Dir())
	} else {
		log.Info("gateway ready", "plugins", len(plugins))
	}
	if f.eager {
		go func() {
			select {
			case <-ready:
				h.Start(wctx)
			case <-wctx.Done():
			}
		}()
	}

	// On a signal the calls in flight are answered first (within
	// gatewayDrainTimeout; a second signal ends plugkit at once).
	drain := func() {
		dctx, cancel := context.WithTimeout(context.Background(), gatewayDrainTimeout)
		defer cancel()
		if gw.Drain(dctx) != nil {
			log.Warn("stopping with calls still in flight", "waited", gatewayDrainTimeout)
		}
	}
	if f.httpAddr != "" {
		return serveHTTP(afterward(ctx, drain), gw, f.httpAddr, token, origins, f.bodyTime, log)
	}
	// Then the input ends, as when the client closes it: the session
	// ends, and the gateway exits 0.
	err = gw.Server().Run(context.WithoutCancel(ctx), gw.IOTransport(inputUntil(ctx, cmd.InOrStdin(), drain), nopWriteCloser{cmd.OutOrStdout()}))
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) {
		log.Warn("client connection ended", "reason", err.Error())
	}
	return nil
}

// afterward is a context that ends once ctx has ended and then done has
// returned.
func afterward(ctx context.Context, done func()) context.Context {
	next, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		<-ctx.Done()
		done()
		cancel()
	}()
	return next
}

// gatewayDrainTimeout bounds how long a stopping stdio gateway waits for
// the calls in flight (a second signal ends it at once).
const gatewayDrainTimeout = 30 * time.Second

// inputUntil is r until ctx ends and then, once before has returned, the
// end of input: a read that waits on r is not held up by it.
func inputUntil(ctx context.Context, r io.Reader, before func()) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, r)
		pw.CloseWithError(err)
	}()
	go func() {
		<-ctx.Done()
		before()
		pw.Close()
	}()
	return pr
}

// checkOrigins parses the --allow-origin values: each scheme://host[:port]
// and nothing more, kept lowercased.
func checkOrigins(origins []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, o := range origins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return nil, command.Usagef("--allow-origin %q: give scheme://host[:port], such as http://localhost:6274", o)
		}
		out[strings.ToLower(u.Scheme+"://"+u.Host)] = true
	}
	return out, nil
}

// allowOrigin refuses a request whose Origin is neither http:// and its
// own Host nor one of allowed, as the MCP Streamable HTTP transport asks
// of servers: a page elsewhere cannot drive the gateway from a browser.
// A request without Origin does not come from a page, and is served.
func allowOrigin(allowed map[string]bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin, sent := r.Header["Origin"]; sent {
			o := strings.ToLower(strings.Join(origin, ","))
			if o != "http://"+strings.ToLower(r.Host) && !allowed[o] {
				http.Error(w, "forbidden: this Origin may not use the gateway (see plugkit gateway --allow-origin)", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// token checks the token rules of --http and returns the token, if any.
func (f *gatewayFlags) token() (string, error) {
	token := strings.TrimSpace(os.Getenv(gatewayTokenEnv))
	if f.tokenFile != "" {
		tokens, err := remote.ReadTokenFile(f.tokenFile)
		if err != nil {
			return "", command.Usage(fmt.Errorf("--token-file: %w", err))
		}
		if len(tokens) != 1 {
			return "", command.Usagef("--token-file %s: want exactly one token, found %d", f.tokenFile, len(tokens))
		}
		token = tokens[0]
	}
	if f.httpAddr == "" {
		if f.tokenFile != "" {
			return "", command.Usagef("--token-file is for --http; a stdio gateway is reached only by the client that starts it")
		}
		return "", nil
	}
	hostname, _, err := net.SplitHostPort(f.httpAddr)
	if err != nil {
		return "", command.Usagef("--http %q: give HOST:PORT, such as 127.0.0.1:8765", f.httpAddr)
	}
	if token == "" && !agentplugin.IsLoopbackHost(hostname) {
		return "", command.Usagef("--http %s is not a loopback address: clients must authenticate there; give a bearer token with --token-file FILE or %s", f.httpAddr, gatewayTokenEnv)
	}
	if token != "" && (strings.ContainsAny(token, " \t\r\n") || agentplugin.CheckHeader("Authorization", "Bearer "+token) != nil) {
		return "", command.Usagef("the gateway token must be printable characters without spaces")
	}
	return token, nil
}

// maxHTTPBody bounds one HTTP request's body, as the SDK's handler does.
const maxHTTPBody = mcp.DefaultMaxRequestBodyBytes

// serveHTTP serves the gateway at http://addr/mcp until ctx ends.
func serveHTTP(ctx context.Context, gw *host.Gateway, addr, token string, origins map[string]bool, bodyTime time.Duration, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return command.Usage(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", allowOrigin(origins, requireToken(token, readBody(bodyTime, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gw.Server() },
		// Abandoned sessions would otherwise be kept forever.
		&mcp.StreamableHTTPOptions{SessionTimeout: 30 * time.Minute})))))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		MaxHeaderBytes: 64 << 10, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	log.Info("gateway listening", "url", "http://"+ln.Addr().String()+"/mcp", "token", token != "")
	// The event streams clients keep open would hold a shutdown to its
	// end: cutting them after a short grace is the normal way to stop.
	err = httpserve.ServeUntil(ctx, srv, ln, false, 2*time.Second, log)
	if errors.Is(err, httpserve.ErrShutdownTimeout) {
		return nil
	}
	return err
}

// requireToken refuses requests without the bearer token, when there is
// one.
func requireToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="plugkit gateway"`)
			http.Error(w, "unauthorized: send Authorization: Bearer TOKEN", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// readBody reads a request's whole body (at most maxHTTPBody bytes) within
// limit before the handler runs: a client that sends it a byte at a time
// is cut off instead of holding a connection and a goroutine forever. The
// deadline then goes away, since an answer may stream for as long as a
// tool runs, and a read deadline left on the connection would cancel it.
func readBody(limit time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		rc.SetReadDeadline(time.Now().Add(limit))
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxHTTPBody))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "request body not received in time", http.StatusRequestTimeout)
			return
		}
		rc.SetReadDeadline(time.Time{})
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// nopWriteCloser is the gateway's stdout for the MCP stdio transport:
// closing the session must not close plugkit's stdout.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// gatewaySource is where the gateway's plugins come from: the home's
// installed plugins, or the PLUGIN arguments.
type gatewaySource struct {
	args      []string
	home      *install.Home
	installed *hostplugins.HomePlugins // nil when serving the arguments
	load      agentplugin.Options
	log       *slog.Logger
	current   map[string]*runnable // the arguments' plugins now served, by name
}

// plugins loads the plugins to serve now, and returns what to remove once
// the host has let go of the previous ones. From the home, a plugin that
// fails to verify or load is logged and left out; an argument that cannot
// be opened is an error, and then nothing changes.
func (s *gatewaySource) plugins(ctx context.Context) ([]host.Plugin, func(), error) {
	if s.installed != nil {
		plugins, errs, err := s.installed.Load()
		for _, e := range errs {
			s.log.Error("installed plugin refused", "reason", e.Error())
		}
		if err != nil {
			return nil, nil, homecmd.Error(err)
		}
		return plugins, func() {}, nil
	}
	next := map[string]*runnable{}
	var plugins []host.Plugin
	fail := func(err error) ([]host.Plugin, func(), error) {
		for name, r := range next {
			if s.current[name] != r {
				r.cleanup()
			}
		}
		return nil, nil, err
	}
	for _, arg := range s.args {
		r, err := openRunnable(ctx, arg, s.home, s.load)
		if err != nil {
			return fail(err)
		}
		if next[r.pkg.Name] != nil {
			r.cleanup()
			return fail(command.Usagef("two plugins are named %s (%s and another argument)", terminal.Safe(r.pkg.Name), terminal.Safe(arg)))
		}
		if old := s.current[r.pkg.Name]; old != nil && old.identity == r.identity && r.identity != "" {
			r.cleanup() // unchanged: keep serving the copy already running
			r = old
		}
		next[r.pkg.Name] = r
		p, err := r.plugin(s.home, "")
		if err != nil {
			return fail(err)
		}
		plugins = append(plugins, p)
	}
	var retired []*runnable
	for name, old := range s.current {
		if next[name] != old {
			retired = append(retired, old)
		}
	}
	s.current = next
	return plugins, func() {
		for _, r := range retired {
			r.cleanup()
		}
	}, nil
}

// cleanup removes what serving the arguments unpacked.
func (s *gatewaySource) cleanup() {
	for _, r := range s.current {
		r.cleanup()
	}
}

// watch loads the home's plugins (serving the home) and closes ready, then
// reloads the plugins when the home's lock file changes (serving the
// home) or on SIGHUP, until ctx ends.
func (s *gatewaySource) watch(ctx context.Context, h *host.Host, gw *host.Gateway, interval time.Duration, ready chan<- struct{}) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var last os.FileInfo
	if s.installed != nil {
		last, _ = os.Stat(s.home.LockPath())
		begin := time.Now()
		s.reload(ctx, h, nil)
		s.log.Info("plugins loaded", "plugins", len(h.Plugins()), "elapsed", time.Since(begin).Round(time.Millisecond))
	}
	close(ready)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		case <-tick.C:
			if s.installed == nil {
				continue
			}
			fi, _ := os.Stat(s.home.LockPath())
			if sameFile(last, fi) {
				continue
			}
			last = fi
		}
		s.reload(ctx, h, gw)
	}
}

// reload gives h the plugins to serve now and tells gw's clients what
// changed (unless gw is nil); a failure is logged, and h keeps serving
// what it served.
func (s *gatewaySource) reload(ctx context.Context, h *host.Host, gw *host.Gateway) {
	plugins, retire, err := s.plugins(ctx)
	if err != nil {
		s.log.Error("reloading plugins", "reason", err.Error())
		return
	}
	ch, err := h.Set(plugins)
	if err != nil {
		s.log.Error("reloading plugins", "reason", err.Error())
	} else if gw != nil {
		gw.Notify(ch)
	}
	retire()
}

// sameFile reports whether two stats of the lock file show the same file:
// every change replaces it by a rename.
func sameFile(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}
