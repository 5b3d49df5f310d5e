// Package metrics holds the facade's Prometheus collectors: the operations
// it answers, the calls it sends upstream, the calls it saves (shared or
// cached) and the requests it refuses. New builds them on a registry of
// their own, never the global default one, so that each server (and each
// test) counts its own.
//
// Every label takes its values from a closed set: endpoint templates
// (restclient.Endpoint), status classes, error codes, query-limit names and
// a bounded set of operation names. Nothing is ever labelled by API key, key
// hash, id or URL.
package metrics

import (
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// MaxOperationNames bounds the operation label: the first names admitted
// (AdmitOperationName) keep their own series, the others are counted as
// OtherOperation.
const MaxOperationNames = 100

// Values of the operation label besides the names of operations.
const (
	// AnonymousOperation labels operations without a name.
	AnonymousOperation = "anonymous"
	// OtherOperation labels operations whose name was not admitted
	// (AdmitOperationName): never seen in an operation of a key the
	// upstream accepted, or seen after the first MaxOperationNames, or not
	// a plausible GraphQL name of at most 64 characters.
	OtherOperation = "other"
)

// ExemplarTraceID is the exemplar label of suregql_operation_duration_seconds
// that names the operation's trace.
const ExemplarTraceID = "trace_id"

// Values of the type label.
const (
	TypeQuery        = "query"
	TypeMutation     = "mutation"
	TypeSubscription = "subscription"
	// TypeUnknown: the request was refused before its document was read
	// (it did not parse, did not validate, or passed a query limit).
	TypeUnknown = "unknown"
)

// Values of the outcome label besides error codes.
const (
	OutcomeOK = "ok"
	// OutcomeError: the first error had no code, or one outside the closed
	// set the facade gives.
	OutcomeError = "error"
)

// Status classes of upstream calls.
const (
	Status2xx = "2xx"
	Status3xx = "3xx"
	Status4xx = "4xx"
	// Status429 is kept apart from 4xx: the key ran out of quota.
	Status429 = "429"
	Status5xx = "5xx"
	// StatusNone: the call got no answer (transport error, timeout).
	StatusNone = "none"
)

// Metrics holds the collectors of one server and the registry they are
// registered with. Its methods are safe for concurrent use, and do nothing
// on a nil *Metrics.
type Metrics struct {
	reg *prometheus.Registry

	operations           *prometheus.CounterVec
	operationDuration    *prometheus.HistogramVec
	upstreamCalls        *prometheus.CounterVec
	upstreamDuration     *prometheus.HistogramVec
	budgetRefusals       prometheus.Counter
	rateLimitRefusals    prometheus.Counter
	queryLimitRefusals   *prometheus.CounterVec
	buildInfo            *prometheus.GaugeVec
	subscriptions        *prometheus.GaugeVec
	subscriptionEvents   *prometheus.CounterVec
	subscriptionPolls    *prometheus.CounterVec
	subscriptionRefusals *prometheus.CounterVec
	webSockets           prometheus.Gauge
	webSocketRefusals    *prometheus.CounterVec

	names operationNames

	coalescer atomic.Pointer[restcache.Coalescer]
	cache     atomic.Pointer[cacheStats]
	shared    atomic.Pointer[sharedStore]
	breaker   atomic.Pointer[restclient.Breaker]
}

// CacheStats is what metrics reads of an answer cache.
type CacheStats interface {
	// Counts returns the GETs answered fresh, stale (by reason) and those
	// passed on.
	Counts() restcache.CacheCounts
}

type cacheStats struct{ CacheStats }

// SharedStore is what metrics reads of the store the replicas share
// (redisstate.Store).
type SharedStore interface {
	// Counts returns the round trips sent, those that failed, and those not
	// sent because the store was known to be down.
	Counts() (roundTrips, failed, skipped int64)
	// Up reports whether the store is asked (its breaker is closed).
	Up() bool
}

type sharedStore struct{ SharedStore }

// operationBuckets reach past the default operation timeout (15s).
var operationBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20}

// New returns the collectors registered on a new registry, with the Go
// runtime's and the process's collectors.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		operations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "suregql_operations_total",
			Help: "GraphQL operations answered, by operation name (the first 100 names seen in operations of keys the upstream accepted; \"other\" for the rest), type, and outcome (\"ok\" or the first error's extensions.code).",
		}, []string{"operation", "type", "outcome"}),
		operationDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "suregql_operation_duration_seconds",
			Help:    "Time from a GraphQL request's arrival to its answer, by operation type.",
			Buckets: operationBuckets,
		}, []string{"type"}),
		upstreamCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "suregql_upstream_calls_total",
			Help: "Requests sent to the Sure API, retries included, by endpoint template and status class (2xx, 3xx, 4xx, 429, 5xx, none: no answer).",
		}, []string{"endpoint", "status_class"}),
		upstreamDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "suregql_upstream_call_duration_seconds",
			Help:    "Time until the answer's headers of a request sent to the Sure API, by endpoint template.",
			Buckets: prometheus.DefBuckets,
		}, []string{"endpoint"}),
		budgetRefusals: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "suregql_budget_refusals_total",
			Help: "Operations refused, whole or in part, with QUERY_TOO_EXPENSIVE: their plan would pass the per-operation call budget.",
		}),
		rateLimitRefusals: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "suregql_rate_limit_refusals_total",
			Help: "Operations refused, whole or in part, with RATE_LIMITED without a call: the key was known to be out of quota.",
		}),
		queryLimitRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "suregql_query_limit_refusals_total",
			Help: "Requests refused with QUERY_LIMIT_EXCEEDED before validation, by the limit passed (extensions.limit).",
		}, []string{"limit"}),
		buildInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "suregql_build_info",
			Help: "Always 1: the build that serves, by version (as -version prints it), VCS revision (empty when unknown) and Go version.",
		}, []string{"version", "revision", "goversion"}),
		subscriptions: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "suregql_subscriptions_active",
			Help: "Subscriptions open now, by resource (chat, import).",
		}, []string{"resource"}),
		subscriptionEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "suregql_subscription_events_total",
			Help: "Events pushed to subscribers, by resource (chat, import).",
		}, []string{"resource"}),
		subscriptionPolls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "suregql_subscription_polls_total",
			Help: "Upstream reads of the subscriptions' poll loops (one per key and resource, whatever the subscribers), by resource and outcome (sent; skipped: the key keeps its reserve, or another replica holds the loop's lease).",
		}, []string{"resource", "outcome"}),
		subscriptionRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "suregql_subscription_refusals_total",
			Help: "Subscriptions refused with SUBSCRIPTION_LIMIT_EXCEEDED, by the limit passed (perKey, total, unprovenKeys).",
		}, []string{"limit"}),
		webSockets: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "suregql_websockets_open",
			Help: "WebSocket connections open now.",
		}),
		webSocketRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "suregql_websocket_refusals_total",
			Help: "WebSocket upgrades refused with CONNECTION_LIMIT_EXCEEDED, by the limit passed (perAddress, total).",
		}, []string{"limit"}),
	}
	m.names.seen = map[string]string{}
	m.reg.MustRegister(
		m.operations, m.operationDuration, m.upstreamCalls, m.upstreamDuration,
		m.budgetRefusals, m.rateLimitRefusals, m.queryLimitRefusals, m.buildInfo,
		m.subscriptions, m.subscriptionEvents, m.subscriptionPolls, m.subscriptionRefusals,
		m.webSockets, m.webSocketRefusals,
		savings{m},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Registry returns the registry the collectors are registered with, to
// gather from or to add collectors to.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler returns the handler of GET /metrics: the registry in the
// Prometheus text format, or in OpenMetrics's when the scraper asks for it
// (Accept: application/openmetrics-text), which alone carries exemplars:
// the trace of an operation in its duration's bucket (Operation).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}

// SetBuildInfo sets suregql_build_info's one series: version, revision
// and the Go version of this binary.
func (m *Metrics) SetBuildInfo(version, revision string) {
	if m == nil {
		return
	}
	m.buildInfo.Reset()
	m.buildInfo.WithLabelValues(version, revision, runtime.Version()).Set(1)
}

// Watch makes suregql_upstream_shared_total and
// suregql_cache_requests_total read the counters of co and cache (either
// may be nil: its series stay at 0). A later call replaces them.
func (m *Metrics) Watch(co *restcache.Coalescer, cache CacheStats) {
	if m == nil {
		return
	}
	m.coalescer.Store(co)
	if cache == nil {
		m.cache.Store(nil)
		return
	}
	m.cache.Store(&cacheStats{cache})
}

// WatchShared makes suregql_redis_up and suregql_redis_requests_total read
// s; without a call (no Redis) they are left out of /metrics.
func (m *Metrics) WatchShared(s SharedStore) {
	if m == nil {
		return
	}
	if s == nil {
		m.shared.Store(nil)
		return
	}
	m.shared.Store(&sharedStore{s})
}

// WatchBreaker makes suregql_upstream_circuit_state,
// suregql_upstream_circuit_transitions_total and
// suregql_upstream_circuit_refused_total read b; without a call (no
// breaker) they are left out of /metrics.
func (m *Metrics) WatchBreaker(b *restclient.Breaker) {
	if m != nil {
		m.breaker.Store(b)
	}
}

// AdmitOperationName gives name a series of its own in the operation
// label, while fewer than MaxOperationNames have one (and when it is a
// plausible GraphQL name, see ValidOperationName). Admitted names are kept
// for the life of the process, so admit only the names of operations
// whose caller proved itself (the facade admits those of operations whose
// API key the upstream accepted): otherwise the first names a stranger
// sends would take every slot, and every later real name would count as
// OtherOperation.
func (m *Metrics) AdmitOperationName(name string) {
	if m != nil && name != "" {
		m.names.admit(name)
	}
}

// Operation counts one GraphQL operation: its name ("" for an anonymous
// operation; a name not admitted by AdmitOperationName counts as
// OtherOperation), its type (one of the Type* values), its outcome
// (OutcomeOK, OutcomeError or an error code of the closed set the caller
// keeps) and how long it took (not observed when 0 or less). traceID, the
// operation's sampled trace (32 hex digits, "" for none), is the
// duration's exemplar: OpenMetrics scrapes show it as trace_id in the
// observation's bucket.
func (m *Metrics) Operation(name, opType, outcome string, d time.Duration, traceID string) {
	if m == nil {
		return
	}
	switch opType {
	case TypeQuery, TypeMutation, TypeSubscription:
	default:
		opType = TypeUnknown
	}
	m.operations.WithLabelValues(m.names.label(name), opType, outcome).Inc()
	if d <= 0 {
		return
	}
	h := m.operationDuration.WithLabelValues(opType)
	if e, ok := h.(prometheus.ExemplarObserver); ok && traceID != "" {
		e.ObserveWithExemplar(d.Seconds(), prometheus.Labels{ExemplarTraceID: traceID})
		return
	}
	h.Observe(d.Seconds())
}

// UpstreamCall counts one request sent upstream (retries are calls too).
func (m *Metrics) UpstreamCall(c restclient.Call) {
	if m == nil {
		return
	}
	endpoint := c.Endpoint
	if endpoint == "" {
		endpoint = restclient.Endpoint(c.Method, "")
	}
	m.upstreamCalls.WithLabelValues(endpoint, StatusClass(c.Status)).Inc()
	m.upstreamDuration.WithLabelValues(endpoint).Observe(c.Duration.Seconds())
}

// BudgetRefused counts an operation refused, whole or in part, with
// QUERY_TOO_EXPENSIVE.
func (m *Metrics) BudgetRefused() {
	if m != nil {
		m.budgetRefusals.Inc()
	}
}

// RateLimitRefused counts an operation refused, whole or in part, locally
// with RATE_LIMITED.
func (m *Metrics) RateLimitRefused() {
	if m != nil {
		m.rateLimitRefusals.Inc()
	}
}

// QueryLimitRefused counts a request refused with QUERY_LIMIT_EXCEEDED;
// limit is its extensions.limit, from the closed set the caller keeps.
func (m *Metrics) QueryLimitRefused(limit string) {
	if m != nil {
		m.queryLimitRefusals.WithLabelValues(limit).Inc()
	}
}

// SubscriptionOpened counts a subscription to a resource (chat, import)
// opening (delta 1) or ending (-1).
func (m *Metrics) SubscriptionOpened(resource string, delta int) {
	if m != nil {
		m.subscriptions.WithLabelValues(resource).Add(float64(delta))
	}
}

// SubscriptionEvent counts an event pushed to a subscriber of resource.
func (m *Metrics) SubscriptionEvent(resource string) {
	if m != nil {
		m.subscriptionEvents.WithLabelValues(resource).Inc()
	}
}

// SubscriptionPoll counts a poll of a resource's loop: sent, or skipped
// to keep the key's reserve.
func (m *Metrics) SubscriptionPoll(resource string, sent bool) {
	if m == nil {
		return
	}
	outcome := "sent"
	if !sent {
		outcome = "skipped"
	}
	m.subscriptionPolls.WithLabelValues(resource, outcome).Inc()
}

// SubscriptionRefused counts a subscription refused by limit (perKey,
// total, unprovenKeys).
func (m *Metrics) SubscriptionRefused(limit string) {
	if m != nil {
		m.subscriptionRefusals.WithLabelValues(limit).Inc()
	}
}

// WebSocketOpened counts a WebSocket connection opening (delta 1) or
// closing (-1).
func (m *Metrics) WebSocketOpened(delta int) {
	if m != nil {
		m.webSockets.Add(float64(delta))
	}
}

// WebSocketRefused counts a WebSocket upgrade refused by limit
// (perAddress, total).
func (m *Metrics) WebSocketRefused(limit string) {
	if m != nil {
		m.webSocketRefusals.WithLabelValues(limit).Inc()
	}
}

// StatusClass returns the status_class label of an upstream answer's
// status, StatusNone for 0 (no answer).
func StatusClass(status int) string {
	switch {
	case status <= 0:
		return StatusNone
	case status < 300:
		return Status2xx
	case status < 400:
		return Status3xx
	case status == http.StatusTooManyRequests:
		return Status429
	case status < 500:
		return Status4xx
	}
	return Status5xx
}

// operationNames is the bounded set of operation names that keep their
// own series.
type operationNames struct {
	mu   sync.RWMutex
	seen map[string]string // name -> its own copy, the label value
}

// label returns the operation label of name: its own when admitted.
func (n *operationNames) label(name string) string {
	if name == "" {
		return AnonymousOperation
	}
	n.mu.RLock()
	l, ok := n.seen[name]
	n.mu.RUnlock()
	if !ok {
		return OtherOperation
	}
	return l
}

// admit adds name to the set while there is room.
func (n *operationNames) admit(name string) {
	if !ValidOperationName(name) {
		return
	}
	n.mu.RLock()
	_, ok := n.seen[name]
	full := len(n.seen) >= MaxOperationNames
	n.mu.RUnlock()
	if ok || full {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.seen[name]; ok || len(n.seen) >= MaxOperationNames {
		return
	}
	// A name parsed from a document shares the document's memory: keep a
	// copy, not the whole query text, for the life of the process.
	l := strings.Clone(name)
	n.seen[l] = l
}

// ValidOperationName reports whether name matches
// [A-Za-z_][A-Za-z0-9_]{0,63}: a GraphQL name short enough for a label.
func ValidOperationName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// savings collects the counters of the coalescer and the cache Watch was
// given, at each scrape.
type savings struct{ m *Metrics }

var (
	sharedDesc = prometheus.NewDesc("suregql_upstream_shared_total",
		"GETs answered by an identical GET of the same key already in flight, instead of a call of their own.", nil, nil)
	cacheDesc = prometheus.NewDesc("suregql_cache_requests_total",
		"GETs looked up in the answer cache, by result: hit (answered fresh, without a call), stale (the upstream could not answer: answered from what was held, past its freshness) or miss (passed on).", []string{"result"}, nil)
	staleDesc = prometheus.NewDesc("suregql_cache_stale_total",
		"GETs answered stale (from what the cache held past its freshness), by reason the upstream did not answer: rate_limited, circuit_open, upstream_unavailable.", []string{"reason"}, nil)
	redisUpDesc = prometheus.NewDesc("suregql_redis_up",
		"1 while the shared state's Redis is asked, 0 while its circuit breaker is open (requests are answered from the upstream without it).", nil, nil)
	redisRequestsDesc = prometheus.NewDesc("suregql_redis_requests_total",
		"Round trips to the shared state's Redis, by result: ok, error (failed or timed out), skipped (not sent: the breaker was open).", []string{"result"}, nil)
)

var (
	circuitStateDesc = prometheus.NewDesc("suregql_upstream_circuit_state",
		"1 for the state the upstream's circuit breaker is in (closed: calls are sent; open: calls fail at once with UPSTREAM_UNAVAILABLE, reason circuit_open; half_open: one probe at a time, a quick GET of an accepted key), 0 for the others.", []string{"state"}, nil)
	circuitTransitionsDesc = prometheus.NewDesc("suregql_upstream_circuit_transitions_total",
		"Changes of state of the upstream's circuit breaker, by the state entered.", []string{"state"}, nil)
	circuitRefusedDesc = prometheus.NewDesc("suregql_upstream_circuit_refused_total",
		"Upstream calls not sent because the circuit breaker was open, or half-open and the call not its probe.", nil, nil)
)

// circuitStates are the breaker's states, in the order they are reported.
var circuitStates = []restclient.BreakerState{restclient.BreakerClosed, restclient.BreakerOpen, restclient.BreakerHalfOpen}

func (s savings) Describe(ch chan<- *prometheus.Desc) {
	ch <- sharedDesc
	ch <- cacheDesc
	ch <- staleDesc
	ch <- redisUpDesc
	ch <- redisRequestsDesc
	ch <- circuitStateDesc
	ch <- circuitTransitionsDesc
	ch <- circuitRefusedDesc
}

// collectBreaker reports the breaker's state and counters, if any.
func (s savings) collectBreaker(ch chan<- prometheus.Metric) {
	b := s.m.breaker.Load()
	if b == nil {
		return
	}
	state := b.Status().State
	transitions, refused := b.Counts()
	for _, st := range circuitStates {
		v := 0.0
		if st == state {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(circuitStateDesc, prometheus.GaugeValue, v, string(st))
		ch <- prometheus.MustNewConstMetric(circuitTransitionsDesc, prometheus.CounterValue, float64(transitions[st]), string(st))
	}
	ch <- prometheus.MustNewConstMetric(circuitRefusedDesc, prometheus.CounterValue, float64(refused))
}

func (s savings) Collect(ch chan<- prometheus.Metric) {
	var shared int64
	if co := s.m.coalescer.Load(); co != nil {
		_, shared, _ = co.Stats()
	}
	var counts restcache.CacheCounts
	if c := s.m.cache.Load(); c != nil {
		counts = c.Counts()
	}
	if r := s.m.shared.Load(); r != nil {
		up := 0.0
		if r.Up() {
			up = 1
		}
		sent, failed, skipped := r.Counts()
		ch <- prometheus.MustNewConstMetric(redisUpDesc, prometheus.GaugeValue, up)
		ch <- prometheus.MustNewConstMetric(redisRequestsDesc, prometheus.CounterValue, float64(sent-failed), "ok")
		ch <- prometheus.MustNewConstMetric(redisRequestsDesc, prometheus.CounterValue, float64(failed), "error")
		ch <- prometheus.MustNewConstMetric(redisRequestsDesc, prometheus.CounterValue, float64(skipped), "skipped")
	}
	s.collectBreaker(ch)
	ch <- prometheus.MustNewConstMetric(sharedDesc, prometheus.CounterValue, float64(shared))
	ch <- prometheus.MustNewConstMetric(cacheDesc, prometheus.CounterValue, float64(counts.Fresh), "hit")
	ch <- prometheus.MustNewConstMetric(cacheDesc, prometheus.CounterValue, float64(counts.Stale), "stale")
	ch <- prometheus.MustNewConstMetric(cacheDesc, prometheus.CounterValue, float64(counts.Misses), "miss")
	for _, r := range restcache.StaleReasons {
		ch <- prometheus.MustNewConstMetric(staleDesc, prometheus.CounterValue, float64(counts.StaleBy[r]), r)
	}
}
