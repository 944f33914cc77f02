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
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/registry/blobs"
	"github.com/plugkit/plugkit/registry/store"
)

// Config configures a Server. Store and Blobs are required; every limit
// has a default, taken when the field is zero.
type Config struct {
	Store store.Store
	Blobs blobs.Store

	// Tokens, one entry each: "NAME=SECRET" (identity NAME) or a bare
	// "SECRET" (identity "token:" and 16 hex digits of its SHA-256); see
	// TokenIdentity. PublishTokens may publish new plugins and write to
	// the plugins they own; they may read too. ReadTokens may read and
	// report installations. AdminTokens may do everything, to every
	// plugin, and change owners.
	PublishTokens, ReadTokens, AdminTokens []string
	// AnonymousRead lets requests without a token read. Otherwise every
	// read needs a token.
	AnonymousRead bool
	// AnonymousReports lets requests without a token report and list
	// installations; by default both need a token, so that nobody can
	// fill the table or read which hosts run what.
	AnonymousReports bool

	// Limits bound a published archive; zero fields take archive's
	// defaults (32 MiB compressed, ...).
	Limits archive.Limits
	// MaxConcurrentPublishes bounds the publishes unpacked and checked at
	// once, since each holds its archive and its files in memory
	// (default 4). Others wait, with their body already received.
	MaxConcurrentPublishes int
	// MaxConcurrentUploads bounds the publish bodies being received at
	// once (default 16); beyond it a publish is answered 503 with
	// Retry-After at once.
	MaxConcurrentUploads int
	// MaxQueuedPublishes bounds the publishes in flight, received or
	// being received, and so the spool files on disk (default 64); beyond
	// it a publish is answered 503 with Retry-After at once.
	MaxQueuedPublishes int
	// MinUploadRate is the slowest average rate, in bytes per second,
	// at which a publish body may arrive after UploadGrace (defaults
	// 64 KiB/s and 10 s). A slower upload is cut off with a 408.
	MinUploadRate int64
	UploadGrace   time.Duration
	// SpoolDir receives publish bodies while they arrive, so that a
	// slow upload holds a file, not memory (default os.TempDir();
	// plugkit serve uses DATA/uploads). Leftovers are removed by New.
	SpoolDir string

	// MaxDescriptionBytes bounds the description stored per plugin and
	// release (default 1,024 bytes); a longer one is cut at a character
	// boundary and ends with "…". The archive keeps the whole text.
	MaxDescriptionBytes int
	// MaxReleasesPerPlugin, MaxChannelsPerPlugin and
	// MaxInstallationsPerPlugin bound what one plugin can add (defaults
	// 1,000, 32 and 10,000); a write beyond them is a 409 quota_exceeded.
	MaxReleasesPerPlugin, MaxChannelsPerPlugin, MaxInstallationsPerPlugin int
	// CatalogPageBytes bounds the encoded size of a catalog or
	// installations page (default 4 MiB, half of the client's default
	// response limit); a page always holds at least one entry.
	CatalogPageBytes int

	// Logger receives errors and publishes; nil discards them. Tokens are
	// never logged.
	Logger *slog.Logger
	// AccessLog logs every request at Info level (method, path, status,
	// duration); off by default, since it costs at high request rates.
	AccessLog bool
	// ResolveCacheTTL bounds how long a resolve answer is reused. Writes
	// through this Server reset the cache at once; the TTL only matters
	// when other servers write to the same store. Zero means one second,
	// or, when the store has a change feed (store.Watcher: PostgreSQL),
	// ten minutes as a mere backstop, since every write anywhere resets
	// the cache and the cache is bypassed while the feed is down.
	// Negative disables the cache.
	ResolveCacheTTL time.Duration

	// BlobsRedirect answers artifact downloads with a 307 to a
	// short-lived presigned URL of the blob store (blobs.Presigner: S3)
	// instead of streaming the bytes through the server. Ignored for
	// stores that cannot presign.
	BlobsRedirect bool
}

// Defaults of Config's limits.
const (
	DefaultMaxConcurrentPublishes    = 4
	DefaultMaxConcurrentUploads      = 16
	DefaultMaxQueuedPublishes        = 64
	DefaultMinUploadRate             = 64 << 10
	DefaultUploadGrace               = 10 * time.Second
	DefaultMaxDescriptionBytes       = 1024
	DefaultMaxReleasesPerPlugin      = 1000
	DefaultMaxChannelsPerPlugin      = 32
	DefaultMaxInstallationsPerPlugin = 10_000
	DefaultCatalogPageBytes          = 4 << 20
)

// Server serves the protocol. It is an http.Handler.
type Server struct {
	cfg        Config // with defaults applied
	store      store.Store
	blobs      blobs.Store
	auth       auth
	maxArchive int64
	queued     chan struct{} // semaphore of publishes in flight
	uploading  chan struct{} // semaphore of bodies being received
	publishing chan struct{} // semaphore of publishes being checked
	log        *slog.Logger
	resolved   *resolveCache
	published  *digestSet
	// gcLock keeps the collector out of the window between a publish's
	// blob write and its commit, in this process.
	gcLock  sync.RWMutex
	metrics *promMetrics
	routes  routes
	// stopWatch ends the change feed's listener, which closes watchDone;
	// both nil when the store has no feed.
	stopWatch context.CancelFunc
	watchDone chan struct{}
}

// orDefault returns v, or def when v is zero or less.
func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// maxEntryOverhead bounds the bytes of a release in a catalog page
// besides its description: ids, version, digest, size, dates, its
// channel, and the JSON around them.
const maxEntryOverhead = 1024

// Check reports limits that do not fit together (Store and Blobs aside):
// one plugin's catalog entry, at its quotas, must fit in the response a
// plugkit client reads (distribution.DefaultMaxResponseBytes), or the
// catalog would fail for every client. A description counts twice, as
// JSON may escape each of its bytes. New calls Check; a caller can call it
// before it creates anything.
func (cfg Config) Check() error {
	desc := orDefault(cfg.MaxDescriptionBytes, DefaultMaxDescriptionBytes)
	releases := orDefault(cfg.MaxReleasesPerPlugin, DefaultMaxReleasesPerPlugin)
	if entry := int64(releases+1) * int64(2*desc+maxEntryOverhead); entry > distribution.DefaultMaxResponseBytes {
		return fmt.Errorf("registry: %d bytes of description and %d releases per plugin allow a catalog entry of up to %d bytes, over the %d a plugkit client reads in one response: lower one of them",
			desc, releases, entry, distribution.DefaultMaxResponseBytes)
	}
	return nil
}

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Blobs == nil {
		return nil, errors.New("registry: Config needs a Store and Blobs")
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	a, err := newAuth(cfg)
	if err != nil {
		return nil, err
	}
	cfg.MaxConcurrentPublishes = orDefault(cfg.MaxConcurrentPublishes, DefaultMaxConcurrentPublishes)
	cfg.MaxConcurrentUploads = orDefault(cfg.MaxConcurrentUploads, DefaultMaxConcurrentUploads)
	cfg.MaxQueuedPublishes = max(orDefault(cfg.MaxQueuedPublishes, DefaultMaxQueuedPublishes), cfg.MaxConcurrentUploads)
	cfg.MinUploadRate = orDefault(cfg.MinUploadRate, DefaultMinUploadRate)
	cfg.UploadGrace = orDefault(cfg.UploadGrace, DefaultUploadGrace)
	cfg.MaxDescriptionBytes = orDefault(cfg.MaxDescriptionBytes, DefaultMaxDescriptionBytes)
	cfg.MaxReleasesPerPlugin = orDefault(cfg.MaxReleasesPerPlugin, DefaultMaxReleasesPerPlugin)
	cfg.MaxChannelsPerPlugin = orDefault(cfg.MaxChannelsPerPlugin, DefaultMaxChannelsPerPlugin)
	cfg.MaxInstallationsPerPlugin = orDefault(cfg.MaxInstallationsPerPlugin, DefaultMaxInstallationsPerPlugin)
	cfg.CatalogPageBytes = orDefault(cfg.CatalogPageBytes, DefaultCatalogPageBytes)
	if cfg.SpoolDir == "" {
		cfg.SpoolDir = os.TempDir()
	} else if err := prepareSpool(cfg.SpoolDir); err != nil {
		return nil, fmt.Errorf("registry: spool directory: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	watcher, watched := cfg.Store.(store.Watcher)
	ttl := cfg.ResolveCacheTTL
	switch {
	case ttl == 0 && watched:
		ttl = watchedCacheTTL
	case ttl == 0:
		ttl = time.Second
	}
	if ts, ok := cfg.Store.(store.Tokens); ok {
		a.db = &tokenDB{store: ts, cache: newMemo[[sha256.Size]byte, principal](0)}
		if watched {
			a.db.cache = newMemo[[sha256.Size]byte, principal](watchedCacheTTL)
		}
	}
	s := &Server{
		cfg:        cfg,
		store:      cfg.Store,
		blobs:      cfg.Blobs,
		auth:       a,
		maxArchive: orDefault(cfg.Limits.MaxArchiveBytes, archive.DefaultMaxArchiveBytes),
		queued:     make(chan struct{}, cfg.MaxQueuedPublishes),
		uploading:  make(chan struct{}, cfg.MaxConcurrentUploads),
		publishing: make(chan struct{}, cfg.MaxConcurrentPublishes),
		log:        cfg.Logger,
		resolved:   newResolveCache(ttl),
		published:  newDigestSet(),
		metrics:    newMetrics(watched),
	}
	s.routes = s.newRoutes()
	if watched {
		// Caches stay off until the feed is up.
		s.resolved.bypass(true)
		if a.db != nil {
			a.db.cache.bypass(true)
		}
		ctx, cancel := context.WithCancel(context.Background())
		s.stopWatch, s.watchDone = cancel, make(chan struct{})
		go s.watch(ctx, watcher)
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

// routes maps the paths below the prefix to their endpoints, except the
// artifacts, whose paths end with a digest. It is built once in New, so
// that routing a request allocates nothing.
type routes struct {
	exact    map[string]route
	artifact route
}

func (s *Server) newRoutes() routes {
	read := []string{http.MethodGet, http.MethodHead}
	return routes{
		exact: map[string]route{
			"/catalog":       {read, s.catalog},
			"/resolve":       {read, s.resolve},
			"/installations": {[]string{http.MethodGet, http.MethodHead, http.MethodPost}, s.installations},
			"/publish":       {[]string{http.MethodPost}, s.publish},
			"/channels":      {[]string{http.MethodPut}, s.setChannel},
			"/yank":          {[]string{http.MethodPost}, s.yank},
			"/admin/owners":  {[]string{http.MethodGet, http.MethodHead, http.MethodPost}, s.owners},
		},
		artifact: route{read, s.artifact},
	}
}

// route returns the endpoint for a path below the prefix, if any.
func (s *Server) route(rest string) (route, bool) {
	if rt, ok := s.routes.exact[rest]; ok {
		return rt, true
	}
	if strings.HasPrefix(rest, "/artifacts/") {
		return s.routes.artifact, true
	}
	return route{}, false
}

// ServeHTTP routes a request. Paths are matched exactly, byte for byte: a
// percent-encoded or uncleaned path is a 400, never reinterpreted.
//
// The operator endpoints (/healthz, /readyz, /metrics) live at the root,
// outside the protocol's prefix, and need no token.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	if !s.serveOps(sw, r) {
		if err := s.dispatch(sw, r); err != nil {
			s.writeError(sw, r, err)
		}
	}
	d := time.Since(start)
	route := routeName(r.URL.Path)
	s.metrics.observe(route, r.Method, sw.status(), d)
	if s.cfg.AccessLog {
		// No header is logged, so no token; the query holds only IDs.
		s.log.Info("request", "method", r.Method, "route", route, "path", r.URL.Path, "query", r.URL.RawQuery,
			"status", sw.status(), "bytes", sw.bytes, "duration_ms", float64(d.Microseconds())/1000,
			"remote", r.RemoteAddr, "user_agent", r.UserAgent())
	}
}

func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) error {
	if r.URL.RawPath != "" || strings.Contains(r.URL.Path, "//") {
		return badRequest(distribution.CodeBadRequest, "the path must not be percent-encoded or hold empty segments")
	}
	rest, ok := strings.CutPrefix(r.URL.Path, distribution.Prefix)
	var rt route
	if ok {
		rt, ok = s.route(rest)
	}
	if !ok {
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
	code  int
	bytes int64 // body bytes written, for the access log
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
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
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
	n, err := io.Copy(w.ResponseWriter, r)
	w.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
