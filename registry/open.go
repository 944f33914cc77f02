package registry

import (
	"io"
	"log"
	"log/slog"
	"net/http"
	"time"
)

// Timeouts and limits of NewHTTPServer. Writes get the longest: a client
// on a slow link downloading a 32 MiB artifact.
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 2 * time.Minute
	WriteTimeout      = 5 * time.Minute
	IdleTimeout       = 2 * time.Minute
	MaxHeaderBytes    = 16 << 10
)

// NewHTTPServer returns an http.Server for h with every timeout and the
// header limit set, so that no client can hold a connection or memory
// without bound.
func NewHTTPServer(addr string, h http.Handler, logger *slog.Logger) *http.Server {
	srv := &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
	if logger != nil {
		srv.ErrorLog = slog.NewLogLogger(logger.Handler(), slog.LevelWarn)
	} else {
		srv.ErrorLog = log.New(io.Discard, "", 0)
	}
	return srv
}
