// Package registry is the Backplane distribution server: the HTTP handlers
// of the protocol under /plugin-protocol/v1 (see docs/protocol.md), token
// authentication, and the publish flow.
//
// A Server keeps no state of its own: metadata is in a store.Store and
// artifacts in a blobs.Store, so that either can be swapped (PostgreSQL,
// an object store) without touching the handlers. Open wires the embedded
// defaults — SQLite and a content-addressed directory — under one data
// directory.
//
// Publishing runs the same code as every client: archive.Unpack within the
// archive limits, then agentplugin.Load. A plugin the loader rejects is
// refused with its diagnostics, and nothing is stored.
package registry

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/blobs"
	"github.com/plugkit/plugkit/registry/store"
)

// Config configures a Server. Store and Blobs are required.
type Config struct {
	Store store.Store
	Blobs blobs.Store
	// PublishTokens may publish, move channels and yank; they may read too.
	PublishTokens []string
	// ReadTokens may read and report installations.
	ReadTokens []string
	// AnonymousRead lets requests without a token read and report
	// installations. Otherwise every read needs a reader or publisher
	// token.
	AnonymousRead bool
	// Limits bound a published archive; zero fields take archive's
	// defaults (32 MiB compressed, ...).
	Limits archive.Limits
	// MaxConcurrentPublishes bounds the publishes unpacked at once, since
	// each holds its archive and its files in memory (default 4).
	MaxConcurrentPublishes int
	// Logger receives errors and publishes; nil discards them. Tokens are
	// never logged.
	Logger *slog.Logger
	// AccessLog logs every request at Info level (method, path, status,
	// duration); off by default, since it costs at high request rates.
	AccessLog bool
	// ResolveCacheTTL bounds how long a resolve answer is reused. Writes
	// through this Server reset the cache at once; the TTL only matters
	// when other servers write to the same store. Zero means one second;
	// negative disables the cache.
	ResolveCacheTTL time.Duration
}

// Server serves the protocol. It is an http.Handler.
type Server struct {
	store      store.Store
	blobs      blobs.Store
	auth       auth
	limits     archive.Limits
	maxArchive int64
	publishing chan struct{} // semaphore of concurrent publishes
	log        *slog.Logger
	accessLog  bool
	resolved   *resolveCache
}

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Blobs == nil {
		return nil, errors.New("registry: Config needs a Store and Blobs")
	}
	s := &Server{
		store:      cfg.Store,
		blobs:      cfg.Blobs,
		auth:       newAuth(cfg.PublishTokens, cfg.ReadTokens, cfg.AnonymousRead),
		limits:     cfg.Limits,
		maxArchive: cfg.Limits.MaxArchiveBytes,
		log:        cfg.Logger,
		accessLog:  cfg.AccessLog,
	}
	if s.maxArchive <= 0 {
		s.maxArchive = archive.DefaultMaxArchiveBytes
	}
	n := cfg.MaxConcurrentPublishes
	if n <= 0 {
		n = 4
	}
	s.publishing = make(chan struct{}, n)
	ttl := cfg.ResolveCacheTTL
	if ttl == 0 {
		ttl = time.Second
	}
	s.resolved = newResolveCache(ttl)
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

// handler serves one endpoint. A returned *apiError becomes its JSON error
// response; any other error is logged and answered with a bare 500, so that
// internal details never reach a client.
type handler func(w http.ResponseWriter, r *http.Request) error

// route is one endpoint: the methods it takes and its handler.
type route struct {
	methods []string
	h       handler
}

// routes returns the endpoint for a path below the prefix, or nil.
func (s *Server) route(rest string) *route {
	switch rest {
	case "/catalog":
		return &route{[]string{http.MethodGet, http.MethodHead}, s.catalog}
	case "/resolve":
		return &route{[]string{http.MethodGet, http.MethodHead}, s.resolve}
	case "/installations":
		return &route{[]string{http.MethodGet, http.MethodHead, http.MethodPost}, s.installations}
	case "/publish":
		return &route{[]string{http.MethodPost}, s.publish}
	case "/channels":
		return &route{[]string{http.MethodPut}, s.setChannel}
	case "/yank":
		return &route{[]string{http.MethodPost}, s.yank}
	}
	if strings.HasPrefix(rest, "/artifacts/") {
		return &route{[]string{http.MethodGet, http.MethodHead}, s.artifact}
	}
	return nil
}

// ServeHTTP routes a request. Paths are matched exactly, byte for byte: a
// percent-encoded or uncleaned path is a 400, never reinterpreted.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	err := s.dispatch(sw, r)
	if err != nil {
		s.writeError(sw, r, err)
	}
	if s.accessLog {
		s.log.Info("request", "method", r.Method, "path", r.URL.Path,
			"status", sw.status(), "duration", time.Since(start))
	}
}

func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) error {
	if r.URL.RawPath != "" || strings.Contains(r.URL.Path, "//") {
		return badRequest(distribution.CodeBadRequest, "the path must not be percent-encoded or hold empty segments")
	}
	rest, ok := strings.CutPrefix(r.URL.Path, distribution.Prefix)
	var rt *route
	if ok {
		rt = s.route(rest)
	}
	if rt == nil {
		return &apiError{status: http.StatusNotFound, code: distribution.CodeNotFound, msg: "no such endpoint"}
	}
	for _, m := range rt.methods {
		if r.Method == m {
			return rt.h(w, r)
		}
	}
	w.Header().Set("Allow", strings.Join(rt.methods, ", "))
	return &apiError{status: http.StatusMethodNotAllowed, code: distribution.CodeMethodNotAllowed, msg: "method not allowed"}
}

// statusWriter remembers the status for the access log. It implements
// io.ReaderFrom by delegation, so that artifacts still go out by sendfile.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

// ReadFrom hands the copy to the underlying writer, which uses sendfile
// for files.
func (w *statusWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return io.Copy(w.ResponseWriter, r)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
