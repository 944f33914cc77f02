package registry

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/plugkit/plugkit/distribution"
)

// promMetrics are the server's Prometheus metrics, in a registry of its own
// (not the global one), so that servers in one process do not collide.
// Every name starts with plugkit_.
type promMetrics struct {
	reg           *prometheus.Registry
	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	publishes     *prometheus.CounterVec
	cache         *prometheus.CounterVec
	invalidations *prometheus.CounterVec
	feedUp        prometheus.Gauge
	feedLosses    *prometheus.CounterVec
	bypasses      *prometheus.CounterVec

	// resolveHit, resolveMiss and resolveBypass return the resolve
	// cache's children of cache and bypasses, looked up once, at the first
	// lookup that counts in them (so that, as with WithLabelValues, a
	// series appears when it is first counted in).
	resolveHit, resolveMiss, resolveBypass func() prometheus.Counter
	// byLabels keeps the children of requests and duration of each label
	// set seen: WithLabelValues checks and hashes every label value on
	// each call, which the requests to a server repeat. The label sets
	// are few (see observe), so the map stays small.
	mu       sync.RWMutex
	byLabels map[requestLabels]requestMetrics
}

// requestLabels are the labels of requests, of which duration has route.
type requestLabels struct {
	route, method string
	code          int
}

// requestMetrics are the children of requests and duration for one set of
// requestLabels.
type requestMetrics struct {
	count prometheus.Counter
	dur   prometheus.Observer
}

// newMetrics creates the metrics; the change feed's gauge only exists
// when there is a feed.
func newMetrics(feed bool) *promMetrics {
	m := &promMetrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plugkit_http_requests_total",
			Help: "HTTP requests answered, by route, method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "plugkit_http_request_duration_seconds",
			Help:    "Time from a request's arrival to the end of its answer, by route.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route"}),
		publishes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plugkit_publishes_total",
			Help: "Publishes committed: created (a new release) or existing (the same digest again).",
		}, []string{"result"}),
		cache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plugkit_cache_requests_total",
			Help: "Cache lookups, by cache and result (hit or miss).",
		}, []string{"cache", "result"}),
		invalidations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plugkit_cache_invalidations_total",
			Help: "Change notifications received from the database, by kind.",
		}, []string{"kind"}),
		feedUp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "plugkit_change_feed_up",
			Help: "1 while the database change feed (LISTEN) is connected; caches are bypassed while it is 0.",
		}),
		feedLosses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plugkit_change_feed_losses_total",
			Help: "Times the database change feed (LISTEN) was lost, by cause (ping_timeout or connection): the caches were emptied and bypassed until it was back.",
		}, []string{"cause"}),
		bypasses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plugkit_cache_bypasses_total",
			Help: "Cache lookups answered from the database because the change feed was down (counted as misses too).",
		}, []string{"cache"}),
	}
	m.resolveHit = sync.OnceValue(func() prometheus.Counter { return m.cache.WithLabelValues("resolve", "hit") })
	m.resolveMiss = sync.OnceValue(func() prometheus.Counter { return m.cache.WithLabelValues("resolve", "miss") })
	m.resolveBypass = sync.OnceValue(func() prometheus.Counter { return m.bypasses.WithLabelValues("resolve") })
	m.byLabels = map[requestLabels]requestMetrics{}
	m.reg.MustRegister(m.requests, m.duration, m.publishes, m.cache,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if feed {
		m.reg.MustRegister(m.invalidations, m.feedUp, m.feedLosses, m.bypasses)
		// Both causes read 0 from the start, so that a rate over them
		// sees the first loss.
		m.feedLosses.WithLabelValues(feedPingTimeout)
		m.feedLosses.WithLabelValues(feedConnection)
	}
	return m
}

// handler serves the metrics in the Prometheus text format.
func (m *promMetrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// observe records one answered request.
func (m *promMetrics) observe(route, method string, code int, d time.Duration) {
	if !knownMethod(method) {
		method = "other" // a client must not grow the label set
	}
	k := requestLabels{route, method, code}
	m.mu.RLock()
	c, ok := m.byLabels[k]
	m.mu.RUnlock()
	if !ok {
		c = requestMetrics{
			count: m.requests.WithLabelValues(route, method, strconv.Itoa(code)),
			dur:   m.duration.WithLabelValues(route),
		}
		m.mu.Lock()
		m.byLabels[k] = c
		m.mu.Unlock()
	}
	c.count.Inc()
	c.dur.Observe(d.Seconds())
}

func knownMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}

// resolveLookup counts a lookup of the resolve cache; a bypass is a miss
// too, as before bypasses were counted on their own.
func (m *promMetrics) resolveLookup(how lookup) {
	switch how {
	case lookupHit:
		m.resolveHit().Inc()
	case lookupBypass:
		m.resolveBypass().Inc()
		m.resolveMiss().Inc()
	default:
		m.resolveMiss().Inc()
	}
}

// routeName is the route label of a path: the endpoint's pattern, so that
// the label set stays small whatever clients send.
func routeName(path string) string {
	switch path {
	case healthzPath, readyzPath, metricsPath:
		return path
	}
	rest, ok := strings.CutPrefix(path, distribution.Prefix)
	if !ok {
		return "other"
	}
	switch rest {
	case "/catalog", "/resolve", "/installations", "/publish", "/channels", "/yank", "/admin/owners":
		return rest
	}
	if strings.HasPrefix(rest, "/artifacts/") {
		return "/artifacts/{digest}"
	}
	return "other"
}
