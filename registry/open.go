package registry

import (
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/plugkit/plugkit/registry/blobs"
	"github.com/plugkit/plugkit/registry/store/sqlite"
)

// Open opens (creating it if needed) the embedded storage under one data
// directory: the SQLite database dir/registry.db and the blob directory
// dir/blobs. Closing the returned store closes the database.
func Open(dir string) (*sqlite.DB, *blobs.Dir, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, nil, fmt.Errorf("registry: data directory: %w", err)
	}
	b, err := blobs.OpenDir(filepath.Join(dir, "blobs"))
	if err != nil {
		return nil, nil, fmt.Errorf("registry: blobs: %w", err)
	}
	db, err := sqlite.Open(filepath.Join(dir, "registry.db"))
	if err != nil {
		return nil, nil, err
	}
	return db, b, nil
}

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
