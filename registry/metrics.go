package registry

import (
	"net/http"
	"strconv"
	"strings"
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
	}
	m.reg.MustRegister(m.requests, m.duration, m.publishes, m.cache,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if feed {
		m.reg.MustRegister(m.invalidations, m.feedUp)
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
	m.requests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
	m.duration.WithLabelValues(route).Observe(d.Seconds())
}

func knownMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}

// cacheLookup counts a lookup of the named cache.
func (m *promMetrics) cacheLookup(cache string, hit bool) {
	result := "miss"
	if hit {
		result = "hit"
	}
	m.cache.WithLabelValues(cache, result).Inc()
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
