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
	data, addr               string
	publishFile, readFile    string
	anonymousRead, accessLog bool
	tlsCert, tlsKey          string
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a plugin registry (Backplane distribution protocol)",
		Long: `Serve runs a registry speaking the Backplane distribution protocol
(docs/protocol.md), with metadata in SQLite (WAL) and artifacts in a
content-addressed directory, both under --data.

Publisher tokens come from $PLUGKIT_PUBLISH_TOKENS (comma-separated) and
--publish-token-file (one per line); reader tokens from $PLUGKIT_READ_TOKENS
and --read-token-file. Reads are anonymous unless reader tokens are set;
--anonymous-read overrides that. Without publisher tokens nobody can publish.

The first line on stdout is "plugkit serve: listening on URL". SIGINT or
SIGTERM stops the server after the requests in flight.`,
		Example: `  PLUGKIT_PUBLISH_TOKENS=s3cret plugkit serve --data ./registry --addr 127.0.0.1:8080
  plugkit serve --publish-token-file /etc/plugkit/publishers --read-token-file /etc/plugkit/readers`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.data, "data", "plugkit-data", "data directory (database and blobs)")
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8080", "listen address (port 0 picks a free port)")
	fl.StringVar(&f.publishFile, "publish-token-file", "", "file of publisher tokens, one per line")
	fl.StringVar(&f.readFile, "read-token-file", "", "file of reader tokens, one per line")
	fl.BoolVar(&f.anonymousRead, "anonymous-read", true, "let requests without a token read (default: true unless reader tokens are set)")
	fl.BoolVar(&f.accessLog, "access-log", false, "log every request to stderr")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "serve https with this certificate (PEM)")
	fl.StringVar(&f.tlsKey, "tls-key", "", "key of --tls-cert (PEM)")
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
	logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
	if len(publish) == 0 {
		logger.Warn("no publisher tokens: publishing is disabled")
	}

	db, blobs, err := registry.Open(f.data)
	if err != nil {
		return usage(err)
	}
	defer db.Close()
	h, err := registry.New(registry.Config{
		Store: db, Blobs: blobs, PublishTokens: publish, ReadTokens: read,
		AnonymousRead: anonymous, Logger: logger, AccessLog: f.accessLog,
	})
	if err != nil {
		return usage(err)
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return usage(err)
	}
	srv := registry.NewHTTPServer(f.addr, h, logger)
	scheme := "http"
	if f.tlsCert != "" {
		scheme = "https"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "plugkit serve: listening on %s://%s\n", scheme, ln.Addr())

	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	done := make(chan error, 1)
	go func() {
		if f.tlsCert != "" {
			done <- srv.ServeTLS(ln, f.tlsCert, f.tlsKey)
		} else {
			done <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-done:
		return usage(err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		return usage(err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return usage(err)
	}
	return nil
}
