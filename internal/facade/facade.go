// Package facade assembles the whole HTTP server of the GraphQL facade
// from its parts: gqlgen's executor with the facade's limits, extensions,
// error presenter and answer middlewares; the planners' shared state (the
// upstream client, caches, stores in memory or Redis); GraphQL over HTTP
// (package gqlhttp) at /graphql; the GraphiQL playground, the health and
// readiness checks and the metrics endpoint. server.go and the end-to-end
// tests both use New, so tests exercise the production wiring.
package facade

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/suregql/suregql/graph"
	"github.com/suregql/suregql/internal/edge/gqlhttp"
	"github.com/suregql/suregql/internal/edge/graphiql"
	"github.com/suregql/suregql/internal/edge/requestid"
	"github.com/suregql/suregql/internal/limits/querylimit"
	"github.com/suregql/suregql/internal/observe/metrics"
	"github.com/suregql/suregql/internal/observe/tracing"
	"github.com/suregql/suregql/internal/planning/live"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/internal/state/redisstate"
	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// Limits on what one request may ask of the server itself. The limits on
// the document are querylimit's defaults (MaxDepth is configurable).
const (
	// complexityLimit bounds graph.Complexity, about one unit per value
	// of the answer: 4× the README's demo tree (20,601) and the tree of
	// 100 roots with 50 subcategories each (25,301); the schema's cycle
	// (subcategories → parent → subcategories) passes it at the fourth
	// lap with the default page (1.2 million).
	complexityLimit = 100_000
	// The persisted-query cache holds query texts by hash.
	persistedQueryCacheBytes = 4 << 20
)

// Config configures the handler.
type Config struct {
	// Upstream is the client of the Sure server; each request derives a
	// copy keyed with the caller's X-Api-Key.
	Upstream *restclient.Client
	// Log receives unexpected errors; nil means slog.Default().
	Log *slog.Logger
	// PlaygroundAPIKey pre-fills the playground's X-Api-Key header (the demo
	// key in demo mode); empty leaves a blank value to fill in.
	PlaygroundAPIKey string
	// DisablePlayground leaves out the GraphiQL playground (/ and its
	// scripts answer 404).
	DisablePlayground bool
	// DisableIntrospection refuses __schema and __type with
	// INTROSPECTION_DISABLED; __typename still answers.
	DisableIntrospection bool
	// MaxUpstreamCalls caps the upstream calls of one operation (0: no
	// cap). An operation may also spend at most a quarter of the key's
	// hourly limit (25 calls of a standard key), see planner.Budget.
	MaxUpstreamCalls int
	// CacheTTL sets the per-key cache of GET answers: 0 serves each
	// answer by the freshness rule (restcache.DefaultWindows, following
	// the key's quota; README, "Freshness"); a duration above 0 caps
	// every window of the rule at it; CacheOff turns the cache off (every
	// read goes upstream, and nothing is held to answer stale).
	CacheTTL time.Duration
	// StaleMax is how long past its freshness an answer is held to answer
	// a read the upstream cannot (the key out of quota, the circuit open,
	// the upstream failing), marked extensions.upstream.stale: 0 means
	// DefaultStaleMax, StaleOff holds none.
	StaleMax time.Duration
	// CacheSize bounds the cache (answers kept); 0 means DefaultCacheSize.
	CacheSize int
	// CacheBytes bounds the memory of the in-process cache's answers (an
	// estimate, see restcache.Cache.LimitBytes); 0 means
	// DefaultCacheBytes. Redis bounds its own (maxmemory).
	CacheBytes int
	// Coalescer shares identical GETs in flight between requests of one
	// key; nil makes a new one. Tests pass their own to watch it. New
	// gives it the handler's numbering of writes (its Generations field)
	// when it has none: a coalescer passed in belongs to the handler from
	// then on, and must not serve another.
	Coalescer *restcache.Coalescer
	// OperationTimeout bounds one request to /graphql: its context ends
	// then, so resolvers and upstream calls stop and unfinished fields
	// answer UPSTREAM_UNAVAILABLE with reason "timeout". 0 means
	// DefaultOperationTimeout.
	OperationTimeout time.Duration
	// CORSOrigins lets pages of these origins (exact, as a browser sends
	// them in Origin, e.g. "https://app.example.com", or "*" for any) call
	// /graphql from the browser; empty turns CORS off.
	CORSOrigins []string
	// CORSHeaders are request headers such pages may send besides
	// gqlhttp.DefaultCORSHeaders (the key, the body's type, the request
	// id, and what browser SDKs add: trace context, Sentry, Apollo).
	CORSHeaders []string
	// MaxDepth bounds how deep fields nest in an operation; 0 means
	// DefaultMaxDepth.
	MaxDepth int
	// MaxResponseBytes caps the data of one answer; 0 means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int
	// MaxBatch bounds the operations of one batched POST (a JSON array of
	// requests, answered with an array; see answerBatch); 0 means
	// DefaultMaxBatch, 1 turns batching off in effect.
	MaxBatch int
	// NewKeyCalls bounds the upstream calls a second this process makes
	// with keys the upstream has not accepted yet (restcache.NewKeyCalls,
	// with its burst of 1,000); 0 means DefaultNewKeyCalls, NewKeyCallsOff
	// bounds nothing.
	NewKeyCalls int
	// QueryCacheBytes bounds the cache of parsed and validated queries;
	// 0 means DefaultQueryCacheBytes.
	QueryCacheBytes int
	// Demo says Upstream is the built-in demo upstream: /readyz reports
	// mode "demo" and the playground shows a notice.
	Demo bool
	// Now is the clock of the readiness cache (see ReadinessTTL) and of
	// the cached answers' age, which their freshness is judged by
	// (restcache.Freshness.Now); nil means time.Now. A test that counts
	// calls gives a clock of its own: its cached answers then age by it,
	// not by how long a busy machine takes.
	Now func() time.Time
	// Metrics counts operations, upstream calls, savings and refusals, and
	// is served at GET /metrics; nil turns metrics off. Build one per
	// handler (metrics.New).
	Metrics *metrics.Metrics
	// DisableMetricsEndpoint leaves GET /metrics out of the handler (the
	// server then serves Metrics.Handler on a listener of its own).
	DisableMetricsEndpoint bool
	// TracerProvider turns on traces (see package tracing): a server span
	// per request to /graphql, continuing the caller's traceparent; a span
	// per GraphQL operation; and a client span per upstream attempt, child
	// of its operation's, whose traceparent is sent upstream. A GET shared
	// by the coalescer is one call: its span is a child of the operation
	// that sent it, the first caller's. nil turns tracing off: no span, no
	// wrapper, no traceparent sent.
	TracerProvider trace.TracerProvider
	// Propagator reads and writes trace context; nil means W3C trace
	// context, and W3C baggage with ForwardBaggage (tracing.Propagator).
	Propagator propagation.TextMapPropagator
	// ForwardBaggage reads the caller's W3C baggage header and sends it
	// upstream with the trace context (-trace-baggage); off, only
	// traceparent and tracestate travel.
	ForwardBaggage bool
	// Redis, when set, keeps the state that saves upstream calls across
	// requests in Redis, shared by every replica given the same Redis and
	// secret: rate-limit readings, family sizes, write generations, the
	// answer cache (with CacheTTL) and persisted queries. In-flight GETs are
	// still shared per process only (the Coalescer). nil keeps all of it in
	// this process.
	Redis *redisstate.Store
	// Documents are the trusted (persisted) documents requests may name by
	// id or hash (gqlhttp.LoadDocuments); with OnlyThese, no other
	// document runs. nil holds none and lets any document run.
	Documents *gqlhttp.Documents
	// Breaker, when set, is the upstream's circuit breaker: every call to
	// Upstream goes through it (restclient.Client.WithBreaker, with the
	// facade's record of accepted keys), and /readyz?verbose and the
	// metrics report its state. nil: none. Give it to one facade only.
	Breaker *restclient.Breaker
	// Draining is closed when the server starts shutting down: /readyz
	// answers 503 from then on, while requests are still served. nil:
	// never.
	Draining <-chan struct{}
	// Version is the build's version, which /readyz reports; empty leaves
	// it out.
	Version string
	// MaxSubscriptionsPerKey and MaxSubscriptions bound the subscriptions
	// open at once, of one key and in all; 0 means
	// live.DefaultMaxPerKey and live.DefaultMaxTotal.
	MaxSubscriptionsPerKey, MaxSubscriptions int
	// StreamKeepAlive is how often an open subscription stream says it is
	// alive; 0 means gqlhttp.DefaultStreamKeepAlive.
	StreamKeepAlive time.Duration
	// MaxWebSockets and MaxWebSocketsPerAddress bound the WebSockets open
	// at once, in all and per client address (an IPv6 /64); 0 means
	// gqlhttp.DefaultMaxWebSockets and DefaultMaxWebSocketsPerAddress, a
	// negative MaxWebSocketsPerAddress none.
	MaxWebSockets, MaxWebSocketsPerAddress int
	// WebSocketIdleTimeout closes a WebSocket holding no operation this
	// long; 0 means gqlhttp.DefaultWebSocketIdleTimeout, negative never.
	WebSocketIdleTimeout time.Duration
}

// Defaults of Config.
const (
	DefaultMaxUpstreamCalls = 100
	DefaultCacheSize        = 10_000
	// DefaultCacheBytes keeps the cache within a quarter of the 256 MiB
	// the deployment gives a replica.
	DefaultCacheBytes       = 64 << 20
	DefaultStaleMax         = time.Hour
	DefaultOperationTimeout = 15 * time.Second
	DefaultMaxDepth         = querylimit.DefaultMaxDepth
	DefaultMaxResponseBytes = 4 << 20
	// The parsed-query cache charges each document querylimit's estimate
	// of its memory: 16 MiB hold a few thousand typical documents.
	DefaultQueryCacheBytes = 16 << 20
	// DefaultMaxBatch: Apollo's BatchHttpLink sends at most 10 operations
	// a batch by default.
	DefaultMaxBatch = gqlhttp.DefaultMaxBatch
	// DefaultNewKeyCalls: with the burst, a minute of new keys' 401s
	// fits in RejectedKeys' 10,000 (restcache.DefaultNewKeyRate).
	DefaultNewKeyCalls = int(restcache.DefaultNewKeyRate)
)

// NewKeyCallsOff lifts the bound of calls with keys not accepted yet
// (Config.NewKeyCalls).
const NewKeyCallsOff = -1

// CacheOff and StaleOff turn the cache (Config.CacheTTL) and its stale
// answers (Config.StaleMax) off.
const (
	CacheOff time.Duration = -1
	StaleOff time.Duration = -1
)

// New returns the facade's HTTP handler: POST/GET /graphql, the playground
// at /, /healthz (liveness: the process serves), /readyz (readiness: the
// process takes requests, not shutting down; ?verbose adds the upstream's
// and Redis's state, which never fail it) and, with Metrics, /metrics.
func New(cfg Config) http.Handler {
	cfg = cfg.withDefaults()
	// The one record of the keys the upstream accepted, fed by the
	// planners from every answer (planner.Shared.Accepted): whose calls
	// the breaker counts, whose calls pass the bound of new keys, whose
	// operation names the metrics label, whose persisted queries are
	// registered, and whose subscriptions are not held to the share of
	// keys not proven yet.
	accepted := &restcache.AcceptedKeys{}
	if cfg.Upstream != nil && cfg.Breaker != nil {
		cfg.Upstream = cfg.Upstream.WithBreaker(cfg.Breaker, accepted.AcceptedID)
	}
	// Every line logged with a request's context names the request.
	log := slog.New(requestid.LogHandler(cfg.Log.Handler()))
	hubOpts := live.Options{
		Poll: pollUpstream, MaxPerKey: cfg.MaxSubscriptionsPerKey, MaxTotal: cfg.MaxSubscriptions,
		Meter: liveMeter(cfg.Metrics), Log: log, Draining: cfg.Draining,
	}
	if cfg.Redis != nil {
		hubOpts.Replicas = cfg.Redis.Live() // one poll per key and resource across the replicas
	}
	hub := live.New(hubOpts)
	exec, waited := newExecutor(cfg, log, accepted, hub)
	shared := newShared(cfg, log, accepted)
	// A secret of this process, or Redis's shared one: ids of keys are
	// keyed hashes, which no one without the secret can recompute.
	ring := callerkey.NewRing(nil, false)
	if cfg.Redis != nil {
		ring = cfg.Redis.Keys()
	}
	cfg.Metrics.Watch(shared.Coalescer, shared.Cache)
	if cfg.Redis != nil {
		cfg.Metrics.WatchShared(cfg.Redis)
	}
	if cfg.Breaker != nil {
		cfg.Metrics.WatchBreaker(cfg.Breaker)
	}
	mux := http.NewServeMux()
	gql := gqlhttp.Handler(exec, gqlhttp.Options{
		Log: log, Metrics: cfg.Metrics, MaxBatch: cfg.MaxBatch,
		OperationTimeout: cfg.OperationTimeout, CORSOrigins: cfg.CORSOrigins, CORSHeaders: cfg.CORSHeaders,
		Callers: ring, Planners: shared,
		Waited: waited, RequestContext: withPendingQueries, Documents: cfg.Documents,
		StreamKeepAlive: cfg.StreamKeepAlive, Deferrable: graph.Deferrable, MaxWebSockets: cfg.MaxWebSockets,
		MaxWebSocketsPerAddress: cfg.MaxWebSocketsPerAddress, WebSocketIdleTimeout: cfg.WebSocketIdleTimeout,
	})
	if cfg.TracerProvider != nil {
		gql = tracedHandler(gql, cfg.TracerProvider, cfg.Propagator) // outermost: refusals are traced too
	}
	mux.Handle("/graphql", gql)
	if !cfg.DisablePlayground {
		// The playground's scripts are served from the binary (package
		// graphiql), so it works without a CDN. Nothing typed into it is
		// kept (not in the URL, not in the browser's storage): it opens on
		// the example query, which runs as it is, each time.
		const assets = "/graphiql/"
		mux.Handle("GET "+assets, graphiql.Handler(assets))
		mux.Handle("GET /{$}", graphiql.Page(graphiql.PageConfig{
			Title:        "Sure GraphQL",
			Endpoint:     "/graphql",
			Assets:       assets,
			DefaultQuery: exampleQuery,
			Headers:      map[string]string{"X-Api-Key": cfg.PlaygroundAPIKey},
			Notice:       playgroundNotice(cfg.Demo),
		}))
	}
	if cfg.Metrics != nil && !cfg.DisableMetricsEndpoint {
		mux.Handle("GET /metrics", cfg.Metrics.Handler())
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	mux.Handle("GET /readyz", newReadiness(cfg, log))
	return httpEdges(requestid.Middleware(mux))
}

// httpEdges sets what every answer of the server says about its content
// and its connection:
//
//   - "X-Content-Type-Options: nosniff": a browser takes each answer for
//     the media type it names, so a JSON answer that holds markup (a
//     category named "<script>…") is never read as a page or a script;
//   - "Connection: close" after a request whose body came chunked. RFC
//     9112 §6.3: a request with both Transfer-Encoding and Content-Length
//     may be an attempt at request smuggling, which a server must refuse or
//     answer and then close the connection. net/http reads the chunked body
//     and drops the Content-Length before a handler sees it, so which
//     requests carried both cannot be told: every chunked request closes
//     its connection after its answer. A request pipelined behind it (what
//     a front proxy that went by Content-Length took for the rest of the
//     body) is never read. Clients send bodies with a Content-Length; one
//     that chunks pays one new connection per request.
func httpEdges(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["X-Content-Type-Options"] = nosniff
		if len(r.TransferEncoding) > 0 {
			h.Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}

// nosniff is the X-Content-Type-Options value of every answer (shared,
// never modified).
var nosniff = []string{"nosniff"}

// withDefaults returns cfg with every zero value that means "the default"
// replaced by it: the one place defaults are applied.
func (cfg Config) withDefaults() Config {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Propagator == nil {
		cfg.Propagator = tracing.Propagator(cfg.ForwardBaggage)
	}
	if cfg.QueryCacheBytes <= 0 {
		cfg.QueryCacheBytes = DefaultQueryCacheBytes
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.CacheBytes <= 0 {
		cfg.CacheBytes = DefaultCacheBytes
	}
	if cfg.CacheSize <= 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	if cfg.StaleMax == 0 {
		cfg.StaleMax = DefaultStaleMax
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = DefaultMaxBatch
	}
	if cfg.NewKeyCalls == 0 {
		cfg.NewKeyCalls = DefaultNewKeyCalls
	}
	if cfg.OperationTimeout <= 0 {
		cfg.OperationTimeout = DefaultOperationTimeout
	}
	return cfg
}

// newExecutor returns gqlgen's executor with the facade's limits,
// extensions and operation middlewares, in the order they must run, and
// the response middlewares an answer passes when it shares another's
// execution (see gqlhttp.Options.Waited). accepted tells the metrics
// which keys' operation names to label.
func newExecutor(cfg Config, log *slog.Logger, accepted *restcache.AcceptedKeys, hub *live.Hub) (*executor.Executor, []graphql.ResponseMiddleware) {
	exec := executor.New(graph.NewSchema(graph.Config{
		Resolvers:  &graph.Resolver{Live: hub},
		Complexity: graph.Complexity(),
	}))
	// Outermost: each operation of a WebSocket has a planner of its own,
	// as each POST has, before anything reads it.
	exec.AroundOperations(gqlhttp.PlannerPerOperation)
	var obs *observer
	if cfg.Metrics != nil || cfg.TracerProvider != nil {
		obs = &observer{metrics: cfg.Metrics, accepted: accepted}
		if cfg.TracerProvider != nil {
			obs.tracer = cfg.TracerProvider.Tracer("github.com/suregql/suregql/internal/facade")
		}
		exec.Use(obs) // first: it sees every answer
	}
	queries := querylimit.NewDocumentCache(cfg.QueryCacheBytes)
	limits := querylimit.NewExtension(querylimit.Limits{MaxDepth: cfg.MaxDepth}, queries)
	exec.SetQueryCache(queries)
	exec.SetParserTokenLimit(limits.Limits().MaxTokens)
	if !cfg.DisableIntrospection {
		exec.Use(extension.Introspection{})
	}
	// The persisted-query extension fills in the query of a request that
	// sent only its hash, so the limits come after it.
	var persisted graphql.Cache[string] = querylimit.NewPersistedQueryCache(persistedQueryCacheBytes, limits.Limits().MaxBytes)
	if cfg.Redis != nil {
		persisted = cfg.Redis.PersistedQueries(persisted, limits.Limits().MaxBytes, 0)
	}
	// Registered once the upstream accepted the request's key (persisted.go).
	exec.Use(extension.AutomaticPersistedQuery{Cache: acceptedKeysOnly{store: persisted}})
	exec.AroundResponses(registerPersisted(persisted))
	exec.Use(limits)
	exec.Use(&querylimit.ComplexityLimit{Max: complexityLimit})
	exec.SetErrorPresenter(graph.ErrorPresenter(log))
	exec.SetRecoverFunc(func(ctx context.Context, v any) error {
		log.ErrorContext(ctx, "resolver panic", "panic", v)
		err := gqlerror.Errorf("internal error")
		err.Extensions = map[string]any{"code": graph.CodeInternal}
		return err
	})
	// What every answer of an operation carries, outermost first: the
	// request id, the cost report, and the operation's log line. Answers
	// refused before execution skip the response middlewares, so refuse
	// runs these for them.
	answered := []graphql.ResponseMiddleware{addRequestID, reportUpstreamCost, logOperation(log)}
	refuse := refusal(answered...)
	if cfg.DisableIntrospection {
		// Without the extension gqlgen fails each such field with an
		// error of no kind (answered INTERNAL and logged); refuse the
		// operation up front with its own code instead.
		exec.AroundOperations(refuseIntrospection(refuse))
	}
	exec.AroundOperations(requireAPIKey(refuse))
	exec.AroundOperations(refuseTooExpensive(refuse, cfg.MaxUpstreamCalls))
	// Innermost of the operation's: the planner reads each operation that
	// runs once, before its fields resolve.
	exec.Use(graph.Planning{})
	for _, m := range answered {
		exec.AroundResponses(m)
	}
	limitResponse := querylimit.LimitResponse(cfg.MaxResponseBytes)
	exec.AroundResponses(limitResponse) // the others see its answer
	// Identical queries of a caller in flight together run once
	// (gqlhttp's sharing, innermost, around the execution itself). Their
	// waiters skip the executor, so they are given what the executor's
	// middlewares give every answer, the observer's and the response-size
	// limit included.
	waited := slices.Concat(answered, []graphql.ResponseMiddleware{limitResponse})
	if obs != nil {
		waited = slices.Concat([]graphql.ResponseMiddleware{obs.InterceptResponse}, waited)
	}
	return exec, waited
}

// newShared returns what the planners of every request share: the
// upstream client and the stores that save calls across requests, in
// memory or (with cfg.Redis) in Redis. accepted learns from every
// upstream answer which keys the upstream accepts.
func newShared(cfg Config, log *slog.Logger, accepted *restcache.AcceptedKeys) *planner.Shared {
	shared := &planner.Shared{
		Upstream:  cfg.Upstream,
		Coalescer: cfg.Coalescer,
		Kinds:     planner.NewKindMemory(planner.DefaultKindMemorySize),
		MaxCalls:  cfg.MaxUpstreamCalls,
		Log:       log,
		KeyChecks: &restcache.KeyChecks{},
		Accepted:  accepted,
	}
	if cfg.NewKeyCalls > 0 {
		shared.NewKeys = &restcache.NewKeyCalls{Rate: float64(cfg.NewKeyCalls)}
	}
	// In this process's memory, with Redis too: see
	// restcache.RejectedKeys for why it is not shared. Large enough that
	// the 401s of every new key NewKeys admits within a minute push out
	// none less than a minute old.
	shared.RejectedKeys = &restcache.RejectedKeys{}
	if shared.NewKeys != nil {
		shared.RejectedKeys.Max = max(restcache.DefaultMaxRejectedKeys, shared.NewKeys.RejectionsWithin(restcache.DefaultRejectedKeyTTL))
	}
	if cfg.Redis != nil {
		shared.RateLimits = cfg.Redis.RateLimits()
		shared.FamilySizes = cfg.Redis.FamilySizes()
		shared.Traits = cfg.Redis.Traits(cfg.Upstream.BaseURL())
	} else {
		shared.RateLimits = &restcache.RateLimits{}
		shared.FamilySizes = &restcache.FamilySizes{}
		shared.Traits = &restcache.Traits{}
	}
	if cfg.Metrics != nil {
		shared.Meter = cfg.Metrics
	}
	if cfg.TracerProvider != nil {
		shared.Upstream = shared.Upstream.WithTransport(tracedUpstream(cfg.TracerProvider, cfg.Propagator))
	}
	fresh := restcache.Freshness{Cap: max(cfg.CacheTTL, 0), StaleMax: max(cfg.StaleMax, 0), Quota: shared.RateLimits.Get, Now: cfg.Now}
	switch {
	case cfg.CacheTTL < 0:
	case cfg.Redis != nil:
		// Redis bounds it by time (each answer's longest window and
		// StaleMax) and by its maxmemory policy, not by a count.
		shared.Cache = cfg.Redis.FreshCache(fresh, nil)
	default:
		shared.Cache = restcache.NewFreshCache(cfg.CacheSize, fresh).LimitBytes(int64(cfg.CacheBytes))
	}
	if shared.Coalescer == nil {
		shared.Coalescer = &restcache.Coalescer{}
	}
	wireGenerations(shared)
	return shared
}

// pollUpstream is the read of every subscription's poll: one call of the
// key through a new planner of it, so the gate, the metrics and the
// rate-limit readings count it as any other call. A poll revalidates: it
// is never answered from the cache, and what it reads is kept for the
// page views after it (unless the chat awaits its reply). The first read,
// the subscriber's starting state, is read as a query would be.
func pollUpstream(ctx context.Context, p *planner.Planner, res live.Resource) (live.State, error) {
	if !live.FirstRead(ctx) {
		ctx = restcache.WithRevalidate(ctx)
	}
	return live.ReadUpstream(ctx, p, res)
}

// liveMeter is m as the hub's meter; nil counts nothing.
func liveMeter(m *metrics.Metrics) live.Meter {
	if m == nil {
		return nil
	}
	return m
}

// wireGenerations gives the cache and the coalescer one numbering of each
// key's writes, and tells both of every write: a key's reads after its own
// write never read an answer cached before it, nor join a GET sent before
// it.
func wireGenerations(shared *planner.Shared) {
	var ofCache *restcache.Generations
	if c, ok := shared.Cache.(interface{ Generations() *restcache.Generations }); ok {
		ofCache = c.Generations()
	}
	co := shared.Coalescer
	if co.Generations == nil {
		co.Generations = ofCache
		if co.Generations == nil {
			co.Generations = &restcache.Generations{}
		}
	}
	switch {
	case shared.Cache == nil:
		shared.Generations = co.Generations
	case ofCache == co.Generations:
		shared.Generations = shared.Cache // its Invalidate numbers both
	default: // a coalescer of the caller's, with a numbering of its own
		shared.Generations = invalidators{shared.Cache, co.Generations}
	}
}

// invalidators tells each of a key's write.
type invalidators []restcache.Invalidator

func (is invalidators) Invalidate(key callerkey.Key, res restclient.Resource) {
	for _, i := range is {
		i.Invalidate(key, res)
	}
}

// logOperation logs one line per operation: its name, duration, upstream
// calls, outcome and error codes (never variables, the key or the answer),
// so an operator can see what spends the callers' budgets and what fails.
// The line carries the request id (see requestid.LogHandler).
func logOperation(log *slog.Logger) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		resp := next(ctx)
		// Asked first: the line's attributes cost allocations even when a
		// handler at WARN or above drops it.
		if !graphql.HasOperationContext(ctx) || moreToCome(resp) || !log.Enabled(ctx, slog.LevelInfo) {
			return resp
		}
		oc := graphql.GetOperationContext(ctx)
		calls := planner.OperationCalls(ctx)
		outcome, codes := outcomeOf(resp)
		errs := 0
		if resp != nil {
			errs = len(resp.Errors)
		}
		op := oc.OperationName
		if op == "" && oc.Operation != nil {
			op = oc.Operation.Name
			if op == "" {
				op = "anonymous " + string(oc.Operation.Operation)
			}
		}
		log.InfoContext(ctx, "graphql operation", "operation", op,
			"duration", time.Since(oc.Stats.OperationStart).Round(time.Microsecond),
			"upstreamCalls", calls, "outcome", outcome, "errors", errs, "errorCodes", codes)
		return resp
	}
}

// Outcomes of an operation, as logged.
const (
	outcomeOK      = "ok"      // no error
	outcomePartial = "partial" // data, and errors for some fields
	outcomeFailed  = "failed"  // errors and no data (refused, or nothing answered)
)

// outcomeOf returns how an answer went and the distinct extensions.code
// values of its errors, sorted.
func outcomeOf(resp *graphql.Response) (outcome string, codes []string) {
	codes = []string{} // logged as [] rather than null
	if resp == nil {
		return outcomeFailed, nil
	}
	for _, e := range resp.Errors {
		if c, ok := e.Extensions["code"].(string); ok && !slices.Contains(codes, c) {
			codes = append(codes, c)
		}
	}
	slices.Sort(codes)
	switch {
	case len(resp.Errors) == 0:
		return outcomeOK, codes
	case len(resp.Data) == 0 || string(resp.Data) == "null":
		return outcomeFailed, codes
	}
	return outcomePartial, codes
}

// addRequestID adds extensions.requestId: the id of the request (also in
// the X-Request-Id header), which its log lines carry.
func addRequestID(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	id := requestid.FromContext(ctx)
	if resp == nil || id == "" {
		return resp
	}
	if resp.Extensions == nil {
		resp.Extensions = map[string]any{}
	}
	resp.Extensions["requestId"] = id
	return resp
}

// playgroundNotice is what the playground says above the editor: in demo
// mode, that the answers are the demo upstream's.
func playgroundNotice(demo bool) string {
	if !demo {
		return ""
	}
	return "Demo mode: this server answers from its built-in demo upstream, with sample data " +
		"(the demo key is filled in). Start it with -upstream or UPSTREAM_URL to serve a real Sure server."
}

// exampleQuery is what the playground opens with: README's first query
// (section "A first query"), the same text (TestHTTP_PlaygroundOpensOnREADMEsFirstQuery).
const exampleQuery = `# Sure's categories as a tree: one upstream call.
# Run it; extensions.upstream in the answer shows the cost.
{
  categories(rootsOnly: true, first: 100) {
    totalCount
    nodes {
      name
      color
      subcategoriesCount
      subcategories(first: 50) { nodes { name parent { name } } }
    }
  }
}
`

// refuseIntrospection refuses an operation that asks for __schema or
// __type (root fields of Query, also through fragments) when introspection
// is turned off.
func refuseIntrospection(refuse refuseFunc) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		oc := graphql.GetOperationContext(ctx)
		if oc.Operation.Operation != ast.Query {
			return next(ctx)
		}
		for _, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Query"}) {
			if f.Name == "__schema" || f.Name == "__type" {
				err := gqlerror.Errorf("introspection is turned off on this server")
				err.Extensions = map[string]any{"code": graph.CodeIntrospectionDisabled}
				return refuse(ctx, err)
			}
		}
		return next(ctx)
	}
}

// requireAPIKey refuses, before any resolver runs, an operation that needs
// the upstream when the request has no usable X-Api-Key. Introspection
// (__schema, __type, __typename) needs no key.
func requireAPIKey(refuse refuseFunc) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		l := planner.From(ctx)
		if l == nil {
			return next(ctx)
		}
		keyErr := l.KeyError()
		if keyErr == nil {
			return next(ctx)
		}
		oc := graphql.GetOperationContext(ctx)
		typeName := "Query"
		if oc.Operation.Operation == ast.Mutation {
			typeName = "Mutation"
		}
		for _, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{typeName}) {
			switch f.Name {
			case "__schema", "__type", "__typename":
				continue
			}
			err := gqlerror.Errorf("%s", keyErr.Error())
			err.Extensions = map[string]any{"code": graph.CodeUnauthenticated}
			return refuse(ctx, err)
		}
		return next(ctx)
	}
}

// refuseTooExpensive refuses, before any call, an operation whose root
// fields alone need more upstream calls than the budget, or than what the
// earlier operations of its batch left of it.
func refuseTooExpensive(refuse refuseFunc, maxCalls int) graphql.OperationMiddleware {
	var rootCosts querylimit.CostMemo // RootCost depends on the operation and its variables alone
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		l := planner.From(ctx)
		if maxCalls <= 0 || l == nil {
			return next(ctx)
		}
		oc := graphql.GetOperationContext(ctx)
		planned := rootCosts.Of(oc, func() int { return graph.RootCost(ctx, oc) })
		var tooExpensive *planner.TooExpensiveError
		if !errors.As(l.Budget().Affordable(ctx, planned), &tooExpensive) {
			return next(ctx)
		}
		budget := tooExpensive.Budget // the key's share of its hourly limit, when lower
		ext := map[string]any{"code": graph.CodeQueryTooExpensive, "budget": budget, "planned": planned}
		if tooExpensive.Spent == 0 {
			err := gqlerror.Errorf("this operation needs at least %d upstream calls before its nested fields; the budget is %d", planned, budget)
			err.Extensions = ext
			return refuse(ctx, err)
		}
		// A batch's operations share one budget.
		err := gqlerror.Errorf("this operation needs at least %d upstream calls before its nested fields; the earlier operations of its batch spent %d of the budget of %d",
			planned, tooExpensive.Spent, budget)
		ext["spent"] = tooExpensive.Spent
		err.Extensions = ext
		return refuse(ctx, err)
	}
}

// refuseFunc answers an operation refused before it ran with err.
type refuseFunc func(ctx context.Context, err *gqlerror.Error) graphql.ResponseHandler

// refusal returns the refuseFunc whose answers pass through mws (outermost
// first): such answers skip the response middlewares, so the request id,
// the cost report (no call) and the log line are added here.
func refusal(mws ...graphql.ResponseMiddleware) refuseFunc {
	pass := gqlhttp.Through(mws...)
	return func(ctx context.Context, err *gqlerror.Error) graphql.ResponseHandler {
		return graphql.OneShot(pass(ctx, func(context.Context) *graphql.Response {
			return &graphql.Response{Errors: gqlerror.List{err}}
		}))
	}
}

// reportUpstreamCost adds extensions.upstream: the number of upstream calls
// the operation made and the key's rate limit as last reported, so that
// callers can watch their hourly budget.
func reportUpstreamCost(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	l := planner.From(ctx)
	if resp == nil || l == nil {
		return resp
	}
	up := upstreamReport{Calls: planner.OperationCalls(ctx)} // this operation's, also in a batch
	if rl := l.RateLimit(); rl != nil {
		up.RateLimit = newRateLimitReport(rl)
	}
	if age, reason, stale := planner.OperationStale(ctx); stale {
		up.Stale = &staleReport{AgeSeconds: int(age / time.Second), Reason: reason}
	}
	if resp.Extensions == nil {
		resp.Extensions = map[string]any{}
	}
	resp.Extensions["upstream"] = up
	return resp
}

// upstreamReport is extensions.upstream. Structs, not maps: encoding/json
// writes a struct's members in order without sorting keys (the order is
// the one sorted keys gave).
type upstreamReport struct {
	Calls     int              `json:"calls"`
	RateLimit *rateLimitReport `json:"rateLimit,omitempty"`
	Stale     *staleReport     `json:"stale,omitempty"`
}

// staleReport is extensions.upstream.stale: some data of the answer was
// served from what the facade held past its freshness, because the
// upstream could not answer. Of several such reads, the oldest: its age in
// whole seconds and its reason (rate_limited, circuit_open,
// upstream_unavailable).
type staleReport struct {
	AgeSeconds int    `json:"ageSeconds"`
	Reason     string `json:"reason"`
}

// rateLimitReport is extensions.upstream.rateLimit: what the upstream's
// headers said, null where they said nothing (an unlimited server's
// numbers, a missing header): never a number the server did not send.
type rateLimitReport struct {
	Limit     *int    `json:"limit"`
	Remaining *int    `json:"remaining"`
	ResetAt   *string `json:"resetAt"`
	Unlimited bool    `json:"unlimited"`
}

func newRateLimitReport(rl *restclient.RateLimit) *rateLimitReport {
	r := &rateLimitReport{Unlimited: rl.Unlimited}
	var resetAt *time.Time
	r.Limit, r.Remaining, resetAt = rl.Sent()
	if resetAt != nil {
		at := resetAt.UTC().Format(time.RFC3339)
		r.ResetAt = &at
	}
	return r
}
