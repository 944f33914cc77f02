package registry

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/plugkit/plugkit/registry/blobs"
)

// The operator endpoints, at the server's root, outside the protocol.
const (
	healthzPath = "/healthz"
	readyzPath  = "/readyz"
	metricsPath = "/metrics"
)

// readyTimeout bounds each readiness probe, so that a load balancer's check
// never hangs on a dead database.
const readyTimeout = 2 * time.Second

// probeDigest is a digest no artifact has; the readiness probes ask the
// store and the blob store about it.
const probeDigest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

// serveOps answers the operator endpoints and reports whether path was one.
func (s *Server) serveOps(w http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Path {
	case healthzPath:
		// Alive: the process answers. Nothing else is checked, so that
		// a database outage never gets every replica restarted.
		writeText(w, http.StatusOK, "ok\n")
	case readyzPath:
		if err := s.ready(r.Context()); err != nil {
			s.log.Warn("not ready", "err", err)
			writeText(w, http.StatusServiceUnavailable, "not ready: "+err.Error()+"\n")
			return true
		}
		writeText(w, http.StatusOK, "ready\n")
	case metricsPath:
		s.metrics.handler().ServeHTTP(w, r)
	default:
		return false
	}
	return true
}

// ready checks that the database and the blob store answer: each is asked
// about an artifact that does not exist.
func (s *Server) ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if _, err := s.store.HasArtifact(ctx, probeDigest); err != nil {
		return errors.New("database unreachable")
	}
	f, _, err := s.blobs.Open(ctx, probeDigest)
	if err == nil {
		f.Close()
	} else if !errors.Is(err, blobs.ErrNotFound) {
		return errors.New("blob store unreachable")
	}
	return nil
}

func writeText(w http.ResponseWriter, status int, text string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write([]byte(text))
}
