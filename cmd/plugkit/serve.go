package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/registry"
)

func init() { verbs = append(verbs, newServeCmd) }

type serveFlags struct {
	storage                  storageFlags
	addr                     string
	publishFile, readFile    string
	anonymousRead, accessLog bool
	tlsCert, tlsKey          string
	blobsRedirect            bool
	shutdownTimeout          time.Duration
	logFormat                string
}

// serveSubcommands are the verbs under serve (token, migrate); each file
// that defines one adds it here from its init.
var serveSubcommands []func() *cobra.Command

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a plugin registry (Backplane distribution protocol)",
		Long: `Serve runs a registry speaking the Backplane distribution protocol
(docs/protocol.md), with metadata in SQLite (WAL) and artifacts in a
content-addressed directory, both under --data.

For several replicas behind a load balancer, keep the metadata in PostgreSQL
(--database or $PLUGKIT_DATABASE_URL; the password from that variable,
$PGPASSWORD or ~/.pgpass, never the command line) and the artifacts in S3
(--blobs s3://BUCKET/PREFIX; credentials from $AWS_ACCESS_KEY_ID and
$AWS_SECRET_ACCESS_KEY or the AWS shared files). Replicas then need no data
directory and drop their caches at once when another one writes. See
docs/operations.md.

Database tokens (plugkit serve token add) work beside the environment's.
/healthz, /readyz and /metrics (Prometheus) are served at the root. SIGHUP
reloads the TLS certificate and key.

Publisher tokens come from $PLUGKIT_PUBLISH_TOKENS (comma-separated) and
--publish-token-file (one per line); reader tokens from $PLUGKIT_READ_TOKENS
and --read-token-file. Reads are anonymous unless reader tokens are set;
--anonymous-read overrides that. Without publisher tokens nobody can publish.

The first line on stdout is "plugkit serve: listening on URL". SIGINT or
SIGTERM stops accepting connections and lets the requests in flight,
publishes included, finish (up to --shutdown-timeout).`,
		Example: `  PLUGKIT_PUBLISH_TOKENS=s3cret plugkit serve --data ./registry --addr 127.0.0.1:8080
  plugkit serve --publish-token-file /etc/plugkit/publishers --read-token-file /etc/plugkit/readers
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
	fl.BoolVar(&f.anonymousRead, "anonymous-read", true, "let requests without a token read (default: true unless reader tokens are set)")
	fl.BoolVar(&f.accessLog, "access-log", false, "log every request to stderr")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "serve https with this certificate (PEM)")
	fl.StringVar(&f.tlsKey, "tls-key", "", "key of --tls-cert (PEM)")
	fl.BoolVar(&f.blobsRedirect, "blobs-redirect", false, "answer artifact downloads with a redirect to a presigned S3 URL instead of streaming them")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 30*time.Second, "on SIGINT/SIGTERM, how long requests in flight may take to finish")
	fl.StringVar(&f.logFormat, "log-format", "text", "log format on stderr: text or json")
	for _, sub := range serveSubcommands {
		cmd.AddCommand(sub())
	}
	return cmd
}

// tokens gathers the tokens of an environment variable and a file.
func tokens(env, file string) ([]string, error) {
	var out []string
	for t := range strings.SplitSeq(os.Getenv(env), ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	if file != "" {
		ts, err := readTokenFile(file)
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	return out, nil
}

func runServe(cmd *cobra.Command, f serveFlags) error {
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return usage(errors.New("--tls-cert and --tls-key go together"))
	}
	if f.shutdownTimeout <= 0 {
		return usage(errors.New("--shutdown-timeout must be positive"))
	}
	logger, err := newLogger(cmd, f.logFormat)
	if err != nil {
		return err
	}
	storage, err := f.storage.config(cmd)
	if err != nil {
		return err
	}
	if f.blobsRedirect && storage.BlobsURL == "" {
		return usage(errors.New("--blobs-redirect needs --blobs s3://BUCKET/PREFIX"))
	}
	publish, err := tokens("PLUGKIT_PUBLISH_TOKENS", f.publishFile)
	if err != nil {
		return usage(err)
	}
	read, err := tokens("PLUGKIT_READ_TOKENS", f.readFile)
	if err != nil {
		return usage(err)
	}
	anonymous := len(read) == 0
	if cmd.Flags().Changed("anonymous-read") {
		anonymous = f.anonymousRead
	}
	if len(publish) == 0 {
		logger.Warn("no publisher tokens in the environment: only database tokens (plugkit serve token add) can publish")
	}
	var certs *registry.CertReloader
	if f.tlsCert != "" {
		if certs, err = registry.NewCertReloader(f.tlsCert, f.tlsKey); err != nil {
			return usage(err)
		}
	}

	st, err := registry.OpenStorage(cmd.Context(), storage)
	if err != nil {
		return usage(err)
	}
	defer st.Close()
	h, err := registry.New(registry.Config{
		Store: st.Store, Blobs: st.Blobs, SpoolDir: st.SpoolDir,
		PublishTokens: publish, ReadTokens: read,
		AnonymousRead: anonymous, Logger: logger, AccessLog: f.accessLog,
		BlobsRedirect: f.blobsRedirect,
	})
	if err != nil {
		return usage(err)
	}
	defer h.Close()
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return usage(err)
	}
	srv := registry.NewHTTPServer(f.addr, h, logger)
	scheme := "http"
	if certs != nil {
		scheme = "https"
		srv.TLSConfig = certs.TLSConfig()
		go reloadOnHangup(cmd.Context(), certs, logger)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "plugkit serve: listening on %s://%s\n", scheme, ln.Addr())

	done := make(chan error, 1)
	go func() {
		if certs != nil {
			done <- srv.ServeTLS(ln, "", "")
		} else {
			done <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-done:
		return usage(err)
	case <-cmd.Context().Done(): // SIGINT or SIGTERM
	}
	logger.Info("shutting down: finishing the requests in flight", "timeout", f.shutdownTimeout)
	shut, cancel := context.WithTimeout(context.Background(), f.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		return usage(fmt.Errorf("shutdown: %w", err))
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return usage(err)
	}
	return nil
}

// newLogger returns the server's logger on stderr in format (text or json).
func newLogger(cmd *cobra.Command, format string) (*slog.Logger, error) {
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), nil)), nil
	}
	return nil, usage(fmt.Errorf("--log-format %q: want text or json", format))
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
