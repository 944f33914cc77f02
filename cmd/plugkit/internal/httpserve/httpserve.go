// Package httpserve is how plugkit's long-running verbs (serve, gateway)
// serve HTTP until a signal, and read the tokens they are given.
package httpserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/remote"
)

// ErrShutdownTimeout is ServeUntil's error when requests were still in
// flight at the end of the grace period.
var ErrShutdownTimeout = errors.New("requests still in flight at the end of the grace period were cut off")

// ServeUntil serves srv on ln (TLS with srv.TLSConfig when tls is set)
// until ctx ends, then stops accepting connections and gives the requests
// in flight up to grace to finish; what is still open after that is cut
// (ErrShutdownTimeout). The long-running verbs (serve, gateway) stop this
// way on SIGINT or SIGTERM. An error of the server itself is a usage or
// I/O error (exit 2).
func ServeUntil(ctx context.Context, srv *http.Server, ln net.Listener, tls bool, grace time.Duration, log *slog.Logger) error {
	done := make(chan error, 1)
	go func() {
		if tls {
			done <- srv.ServeTLS(ln, "", "")
		} else {
			done <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-done:
		return command.Usage(err)
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing the requests in flight", "timeout", grace)
	shut, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		srv.Close()
		<-done
		if errors.Is(err, context.DeadlineExceeded) {
			err = ErrShutdownTimeout
		}
		return command.Usage(fmt.Errorf("shutdown: %w", err))
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return command.Usage(err)
	}
	return nil
}

// Tokens gathers the token entries of an environment variable and a file.
func Tokens(env, file string) ([]string, error) {
	var out []string
	for t := range strings.SplitSeq(os.Getenv(env), ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	if file != "" {
		ts, err := remote.ReadTokenFile(file)
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	return out, nil
}
