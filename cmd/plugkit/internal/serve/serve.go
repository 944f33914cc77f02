package serve

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/httpserve"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/memory"
	"github.com/plugkit/plugkit/registry"
	"github.com/plugkit/plugkit/registry/storage"
)

type serveFlags struct {
	storage                           storageFlags
	addr                              string
	publishFile, readFile, adminFile  string
	anonymousRead, anonymousReports   bool
	accessLog                         bool
	tlsCert, tlsKey                   string
	gcInterval, gcGrace, resolveTTL   time.Duration
	uploadGrace                       time.Duration
	minUploadRate                     int64
	uploads, queued, publishes        int
	releases, channels, installations int
	descriptionBytes                  int
	blobsRedirect                     bool
	shutdownTimeout                   time.Duration
	logFormat                         string
}

// NewCmdServe builds plugkit serve, which runs with fac.
func NewCmdServe(fac *factory.Factory) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a plugin registry (Backplane distribution protocol)",
		Long: `Serve runs a registry speaking the Backplane distribution protocol
(docs/protocol.md), with metadata in SQLite (WAL) and artifacts in a
content-addressed directory, both under --data (created if needed, after
the address is bound).

For several replicas behind a load balancer, keep the metadata in PostgreSQL
(--database or $PLUGKIT_DATABASE_URL; the password from that variable,
$PGPASSWORD or ~/.pgpass, never the command line) and the artifacts in S3
(--blobs s3://BUCKET/PREFIX; credentials from $AWS_ACCESS_KEY_ID and
$AWS_SECRET_ACCESS_KEY or the AWS shared files). Replicas then need no data
directory, and drop their caches as soon as another one writes. See
docs/operations.md. With the database in --data (SQLite), one server holds
the directory (a lock on DATA/registry.lock, released when it exits): a
second serve on it exits 1 naming the directory and the first one's pid.

Tokens, one per line in a file or comma-separated in the environment, each
"NAME=SECRET" (identity NAME) or a bare secret (identity "token:" and 16 hex
digits of its SHA-256; the identities are logged at start):
  publishers  $PLUGKIT_PUBLISH_TOKENS, --publish-token-file: publish new
              plugins, and write to the plugins they own
  readers     $PLUGKIT_READ_TOKENS, --read-token-file: read, and report
              installations
  admins      $PLUGKIT_ADMIN_TOKENS, --admin-token-file: everything, on every
              plugin, and change owners (plugkit owners)
Tokens kept in the database (plugkit serve token add) work beside these;
their identity is their ID. The first identity to publish a plugin owns it. Reads are anonymous unless
reader tokens are set (--anonymous-read decides otherwise); installation
reports need a token unless --anonymous-reports. Without publisher or admin
tokens nobody can publish.

Publish bodies are received into DATA/uploads before they take one of the
publish slots, at no less than --min-upload-rate after --upload-grace; past
--max-uploads arriving or --max-queued in flight the registry answers 503
with Retry-After. Blobs that
no release refers to (left by a publish that crashed) are removed every
--gc-interval once they are older than --gc-grace; plugkit serve gc runs the
same collection once.

/healthz (alive), /readyz (database and blobs reachable) and /metrics
(Prometheus) are served at the root. SIGHUP reloads --tls-cert and --tls-key.

The first line on stdout is "plugkit serve: listening on URL". SIGINT or
SIGTERM stops accepting connections and lets the requests in flight,
publishes included, finish (up to --shutdown-timeout).

Exit status: 0 stopped by SIGINT or SIGTERM, 1 another plugkit serve holds
--data, 2 usage or I/O error (an address in use included).`,
		Example: `  PLUGKIT_PUBLISH_TOKENS=alice=s3cret plugkit serve --data ./registry-data --addr 127.0.0.1:8080
  plugkit serve --publish-token-file /etc/plugkit/publishers --read-token-file /etc/plugkit/readers \
      --admin-token-file /etc/plugkit/admins --data /var/lib/plugkit
  PGPASSWORD=… AWS_ACCESS_KEY_ID=… AWS_SECRET_ACCESS_KEY=… plugkit serve --addr :8443 \
      --database postgres://plugkit@db.internal/plugkit --blobs s3://artifacts/plugkit \
      --tls-cert /etc/plugkit/tls.crt --tls-key /etc/plugkit/tls.key`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd, f)
		},
	}
	f.storage.register(cmd, true)
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8080", "listen address (port 0 picks a free port)")
	fl.StringVar(&f.publishFile, "publish-token-file", "", "file of publisher tokens, one per line")
	fl.StringVar(&f.readFile, "read-token-file", "", "file of reader tokens, one per line")
	fl.StringVar(&f.adminFile, "admin-token-file", "", "file of admin tokens, one per line")
	// Off in the flag's own default, so that --help does not print a
	// second default: the real one depends on the reader tokens.
	fl.BoolVar(&f.anonymousRead, "anonymous-read", false, "let requests without a token read (default: on, unless reader tokens are set)")
	fl.BoolVar(&f.anonymousReports, "anonymous-reports", false, "let requests without a token report and list installations")
	fl.BoolVar(&f.accessLog, "access-log", false, "log every request to stderr")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "serve https with this certificate (PEM)")
	fl.StringVar(&f.tlsKey, "tls-key", "", "key of --tls-cert (PEM)")
	fl.DurationVar(&f.gcInterval, "gc-interval", time.Hour, "how often to remove orphan blobs (0 never)")
	fl.DurationVar(&f.gcGrace, "gc-grace", registry.DefaultGCGrace, "age below which an orphan blob is kept")
	fl.DurationVar(&f.resolveTTL, "resolve-cache-ttl", time.Second, "how long a resolve answer is reused (0 disables the cache; with --database the default is 10m, since every write resets it)")
	fl.IntVar(&f.uploads, "max-uploads", registry.DefaultMaxConcurrentUploads, "publish bodies received at once; beyond, 503")
	fl.IntVar(&f.queued, "max-queued", registry.DefaultMaxQueuedPublishes, "publishes in flight (received or arriving); beyond, 503")
	fl.IntVar(&f.publishes, "max-publishes", registry.DefaultMaxConcurrentPublishes, "publishes unpacked and checked at once")
	fl.Int64Var(&f.minUploadRate, "min-upload-rate", registry.DefaultMinUploadRate, "slowest average upload rate, bytes/s")
	fl.DurationVar(&f.uploadGrace, "upload-grace", registry.DefaultUploadGrace, "time an upload has before --min-upload-rate applies")
	fl.IntVar(&f.releases, "max-releases", registry.DefaultMaxReleasesPerPlugin, "releases per plugin")
	fl.IntVar(&f.channels, "max-channels", registry.DefaultMaxChannelsPerPlugin, "channels per plugin")
	fl.IntVar(&f.installations, "max-installations", registry.DefaultMaxInstallationsPerPlugin, "installation reports per plugin")
	fl.IntVar(&f.descriptionBytes, "max-description", registry.DefaultMaxDescriptionBytes, "bytes of description stored per release")
	fl.BoolVar(&f.blobsRedirect, "blobs-redirect", false, "answer artifact downloads with a redirect to a presigned S3 URL instead of streaming them")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 30*time.Second, "on SIGINT/SIGTERM, how long requests in flight may take to finish")
	fl.StringVar(&f.logFormat, "log-format", "text", "log format on stderr: text or json")
	cmd.AddCommand(newServeGCCmd(), newServeTokenCmd(), newServeMigrateCmd())
	return cmd
}

// checkPositive refuses a limit flag set to zero or less: each has a
// default, and a zero would not mean "no limit".
func checkPositive(fl *pflag.FlagSet, names ...string) error {
	for _, n := range names {
		if v := fl.Lookup(n).Value.String(); strings.HasPrefix(v, "-") || v == "0" || v == "0s" {
			return command.Usagef("--%s must be positive, not %s", n, v)
		}
	}
	return nil
}

func runServe(cmd *cobra.Command, f serveFlags) error {
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return command.Usagef("--tls-cert and --tls-key go together")
	}
	if err := checkPositive(cmd.Flags(), "max-uploads", "max-queued", "max-publishes", "min-upload-rate", "upload-grace",
		"max-releases", "max-channels", "max-installations", "max-description", "gc-grace", "shutdown-timeout"); err != nil {
		return err
	}
	limits := registry.Config{MaxDescriptionBytes: f.descriptionBytes, MaxReleasesPerPlugin: f.releases}
	if err := limits.Check(); err != nil {
		return command.Usage(err)
	}
	logger, err := newLogger(cmd, f.logFormat)
	if err != nil {
		return err
	}
	cfg, err := f.storage.config(cmd)
	if err != nil {
		return err
	}
	if f.blobsRedirect && cfg.BlobsURL == "" {
		return command.Usagef("--blobs-redirect needs --blobs s3://BUCKET/PREFIX")
	}
	var lists [3][]string
	for i, src := range [][2]string{
		{"PLUGKIT_PUBLISH_TOKENS", f.publishFile}, {"PLUGKIT_READ_TOKENS", f.readFile}, {"PLUGKIT_ADMIN_TOKENS", f.adminFile},
	} {
		ts, err := httpserve.Tokens(src[0], src[1])
		if err != nil {
			return command.Usage(err)
		}
		lists[i] = ts
	}
	publish, read, admin := lists[0], lists[1], lists[2]
	anonymous := len(read) == 0
	if cmd.Flags().Changed("anonymous-read") {
		anonymous = f.anonymousRead
	}
	if len(publish)+len(admin) == 0 {
		logger.Warn("no publisher or admin tokens in the environment: only database tokens (plugkit serve token add) can publish")
	}
	for role, list := range map[string][]string{"publisher": publish, "reader": read, "admin": admin} {
		if len(list) > 0 {
			logger.Info("tokens", "role", role, "identities", identities(list))
		}
	}
	var resolveTTL time.Duration // the default: Config's, which knows the store
	if cmd.Flags().Changed("resolve-cache-ttl") {
		resolveTTL = f.resolveTTL
		if resolveTTL <= 0 {
			resolveTTL = -1
		}
	}
	var certs *registry.CertReloader
	if f.tlsCert != "" {
		if certs, err = registry.NewCertReloader(f.tlsCert, f.tlsKey); err != nil {
			return command.Usage(err)
		}
	}

	// Bind first: a busy port must not leave a new data directory behind.
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return command.Usage(err)
	}
	defer ln.Close()
	// A second server on the same SQLite database would answer from its
	// caches what the first changed.
	cfg.Exclusive = true
	st, err := storage.Open(cmd.Context(), cfg)
	if err != nil {
		return storageError(err)
	}
	defer st.Close()
	h, err := registry.New(registry.Config{
		Store: st.Store, Blobs: st.Blobs, PublishTokens: publish, ReadTokens: read, AdminTokens: admin,
		AnonymousRead: anonymous, AnonymousReports: f.anonymousReports, Logger: logger, AccessLog: f.accessLog,
		ResolveCacheTTL: resolveTTL, SpoolDir: st.SpoolDir, BlobsRedirect: f.blobsRedirect,
		MaxConcurrentUploads: f.uploads, MaxQueuedPublishes: f.queued, MaxConcurrentPublishes: f.publishes,
		MinUploadRate: f.minUploadRate, UploadGrace: f.uploadGrace,
		MaxReleasesPerPlugin: f.releases, MaxChannelsPerPlugin: f.channels,
		MaxInstallationsPerPlugin: f.installations, MaxDescriptionBytes: f.descriptionBytes,
	})
	if err != nil {
		return command.Usage(err)
	}
	defer h.Close()
	memory.KeepHeapFloor()
	srv := registry.NewHTTPServer(f.addr, h, logger)
	scheme := "http"
	if certs != nil {
		scheme = "https"
		srv.TLSConfig = certs.TLSConfig()
		go reloadOnHangup(cmd.Context(), certs, logger)
	}
	command.Printf(cmd.OutOrStdout(), "plugkit serve: listening on %s://%s\n", scheme, ln.Addr().String())

	// The collector uses the store and the blobs: it is stopped, and
	// waited for, before the deferred closes above run.
	var gc sync.WaitGroup
	defer gc.Wait()
	ctx, stop := context.WithCancel(cmd.Context())
	defer stop()
	if f.gcInterval > 0 {
		gc.Go(func() { h.RunGC(ctx, f.gcInterval, registry.GCOptions{Grace: f.gcGrace}) })
	}
	return httpserve.ServeUntil(ctx, srv, ln, certs != nil, f.shutdownTimeout, logger)
}

// newLogger returns the server's logger on stderr in format (text or json).
func newLogger(cmd *cobra.Command, format string) (*slog.Logger, error) {
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), nil)), nil
	}
	return nil, command.Usagef("--log-format %q: want text or json", format)
}

// reloadOnHangup reloads the TLS certificate on every SIGHUP until ctx
// ends; a failed reload is logged and the old certificate stays.
func reloadOnHangup(ctx context.Context, certs *registry.CertReloader, logger *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if err := certs.Reload(); err != nil {
				logger.Error("TLS reload failed; keeping the current certificate", "err", err)
			} else {
				logger.Info("TLS certificate reloaded")
			}
		}
	}
}

// identities lists the identities of token entries, never their secrets.
func identities(entries []string) string {
	seen := map[string]bool{}
	var ids []string
	for _, e := range entries {
		if id := registry.TokenIdentity(e); !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return strings.Join(ids, ",")
}

// gcResult is plugkit serve gc's --json document.
type gcResult struct {
	registry.GCReport
	Data string `json:"data"`
}

// serveGcOptions are the flags of plugkit serve gc.
type serveGcOptions struct {
	storage storageFlags
	gc      registry.GCOptions
	asJSON  bool
}

func newServeGCCmd() *cobra.Command {
	opts := &serveGcOptions{}
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Remove blobs that no release refers to",
		Long: `Gc removes from a registry's data directory the blobs that no release
refers to and that have not been written for --grace: what a publish leaves
when the server dies between storing its archive and committing its release.
Such blobs are never served; they only take space. plugkit serve does the
same every --gc-interval; gc runs it once, and is safe to run while the
server runs on the same storage (--data, or --database and --blobs as the
server has them).

A directory that holds no registry (no DATA/registry.db) is refused, and
not created.

Exit status: 0 collected, 2 usage or I/O error, or no registry there.`,
		Example: `  plugkit serve gc --data ./registry-data --dry-run
  plugkit serve gc --data /var/lib/plugkit --grace 1h --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.gc.Grace <= 0 {
				return command.Usagef("--grace must be positive")
			}
			cfg, err := opts.storage.config(cmd)
			if err != nil {
				return err
			}
			cfg.OpenExisting = true
			st, err := storage.Open(cmd.Context(), cfg)
			if err != nil {
				return storageError(err)
			}
			defer st.Close()
			rep, err := registry.CollectGarbage(cmd.Context(), st.Store, st.Blobs, opts.gc)
			if err != nil {
				return command.Usage(err)
			}
			return command.Output(cmd, opts.asJSON, gcResult{GCReport: rep, Data: cfg.DataDir}, func(w io.Writer) {
				verb := "removed"
				if rep.DryRun {
					verb = "would remove"
				}
				for _, d := range rep.Orphans {
					command.Printf(w, "%s %s\n", verb, d)
				}
				command.Printf(w, "%s %s (%d bytes) of %s; %d unreferenced kept within --grace\n", verb,
					command.Plural(len(rep.Orphans), "orphan blob"), rep.OrphanBytes, command.Plural(rep.Blobs, "blob"), rep.Young)
			})
		},
	}
	opts.storage.register(cmd, true)
	cmd.Flags().DurationVar(&opts.gc.Grace, "grace", registry.DefaultGCGrace, "keep unreferenced blobs younger than this")
	cmd.Flags().BoolVar(&opts.gc.DryRun, "dry-run", false, "list what would be removed, remove nothing")
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print one JSON document")
	return cmd
}
