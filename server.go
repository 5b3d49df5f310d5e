// Command suregql serves a GraphQL facade over the REST API of a Sure
// server. Each caller's X-Api-Key is passed upstream unchanged.
//
// With no upstream configured it starts the built-in demo upstream (an
// in-process fake of Sure seeded with a sample family) so that the
// playground works at once.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/suregql/suregql/internal/edge/requestid"
	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/observe/metrics"
	"github.com/suregql/suregql/internal/observe/tracing"
	"github.com/suregql/suregql/internal/state/redisstate"
	"github.com/suregql/suregql/restclient"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "suregql:", err)
		os.Exit(1)
	}
}

// config is the server's configuration: flags, with environment fallbacks.
type config struct {
	addr             string
	upstream         string
	upstreamTimeout  time.Duration
	maxUpstreamCalls int
	cacheTTL         time.Duration
	operationTimeout time.Duration
	corsOrigins      []string
	maxDepth         int
	maxResponseBytes int
	maxBatch         int
	metricsAddr      string // empty: /metrics on the main listener
	redisURL         string // empty: state kept in this process
	redisSecret      string
	// Off switches, so that the zero value serves both.
	disablePlayground    bool
	disableIntrospection bool
	logFormat            string // "text" or "json"
	logLevel             slog.Level
	// showVersion: print the version and exit (-version).
	showVersion bool
}

func parseConfig(args []string, getenv func(string) string) (config, error) {
	return parseFlags(flag.NewFlagSet("suregql", flag.ContinueOnError), args, getenv)
}

// parseFlags defines the server's flags on fs, each defaulting to the
// environment variable its usage names ("(env NAME)"; a flag wins over its
// variable), and parses args. Only -version, a command rather than a
// setting, has no variable.
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string) (config, error) {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	var cfg config
	fs.StringVar(&cfg.addr, "addr", env("ADDR", ":8080"), "listen address (env ADDR)")
	fs.StringVar(&cfg.upstream, "upstream", env("UPSTREAM_URL", ""),
		"base URL of the Sure server, e.g. https://sure.example.com (env UPSTREAM_URL); empty serves the built-in demo upstream")
	fs.StringVar(&cfg.logFormat, "log-format", env("LOG_FORMAT", "text"), "log format: text or json, one line per record (env LOG_FORMAT)")
	logLevel := env("LOG_LEVEL", "info")
	fs.StringVar(&logLevel, "log-level", logLevel, "least level logged: debug, info, warn or error (env LOG_LEVEL)")
	fs.BoolVar(&cfg.showVersion, "version", false, "print the version of this build and exit")
	timeout := env("UPSTREAM_TIMEOUT", "10s")
	fs.StringVar(&timeout, "upstream-timeout", timeout, "timeout of one upstream request (env UPSTREAM_TIMEOUT)")
	maxCalls := env("MAX_UPSTREAM_CALLS", strconv.Itoa(facade.DefaultMaxUpstreamCalls))
	fs.StringVar(&maxCalls, "max-upstream-calls", maxCalls, "upstream calls allowed per GraphQL operation, 0 for no cap (env MAX_UPSTREAM_CALLS)")
	cacheTTL := env("CACHE_TTL", "0")
	fs.StringVar(&cacheTTL, "cache-ttl", cacheTTL, "keep GET answers per API key this long, e.g. 30s; 0 turns the cache off (env CACHE_TTL)")
	opTimeout := env("OPERATION_TIMEOUT", facade.DefaultOperationTimeout.String())
	fs.StringVar(&opTimeout, "operation-timeout", opTimeout,
		"deadline of one GraphQL request: fields not answered by then fail with UPSTREAM_UNAVAILABLE (env OPERATION_TIMEOUT)")
	corsOrigins := env("CORS_ORIGINS", "")
	fs.StringVar(&corsOrigins, "cors-origins", corsOrigins,
		"comma-separated origins whose pages may call /graphql from a browser, e.g. https://app.example.com, or * for any; empty turns CORS off (env CORS_ORIGINS)")
	playground, err := strconv.ParseBool(env("PLAYGROUND", "true"))
	if err != nil {
		return cfg, fmt.Errorf("PLAYGROUND %q is not a boolean", getenv("PLAYGROUND"))
	}
	fs.BoolVar(&playground, "playground", playground, "serve the GraphiQL playground at / (env PLAYGROUND); -playground=false for production")
	introspection, err := strconv.ParseBool(env("INTROSPECTION", "true"))
	if err != nil {
		return cfg, fmt.Errorf("INTROSPECTION %q is not a boolean", getenv("INTROSPECTION"))
	}
	fs.BoolVar(&introspection, "introspection", introspection,
		"answer __schema and __type (env INTROSPECTION); the playground needs it; -introspection=false hides the schema")
	maxDepth := env("MAX_DEPTH", strconv.Itoa(facade.DefaultMaxDepth))
	fs.StringVar(&maxDepth, "max-depth", maxDepth, "deepest nesting of fields allowed in an operation (env MAX_DEPTH)")
	maxResponse := env("MAX_RESPONSE_BYTES", strconv.Itoa(facade.DefaultMaxResponseBytes))
	fs.StringVar(&maxResponse, "max-response-bytes", maxResponse, "largest data of one answer, in bytes; larger answers are refused with RESPONSE_TOO_LARGE (env MAX_RESPONSE_BYTES)")
	maxBatch := env("MAX_BATCH", strconv.Itoa(facade.DefaultMaxBatch))
	fs.StringVar(&maxBatch, "max-batch", maxBatch,
		"most operations of one batched POST (a JSON array of requests); 1 turns batching off (env MAX_BATCH)")
	fs.StringVar(&cfg.metricsAddr, "metrics-addr", env("METRICS_ADDR", ""),
		"serve GET /metrics on this address instead of the main listener, e.g. :9090 (env METRICS_ADDR)")
	fs.StringVar(&cfg.redisURL, "redis-url", env("REDIS_URL", ""),
		"Redis shared by the replicas, redis://[user:password@]host:6379[/db] or rediss://… (env REDIS_URL); empty keeps the cache, rate limits and persisted queries in this process")
	fs.StringVar(&cfg.redisSecret, "redis-secret", env("REDIS_SECRET", ""),
		"secret that names and seals what is stored in Redis, the same on every replica, at least 16 bytes; required with -redis-url (env REDIS_SECRET)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if cfg.showVersion {
		return cfg, nil
	}
	if cfg.upstream != "" {
		u, err := restclient.ParseBaseURL(cfg.upstream)
		if err != nil {
			// Echoed without its password, query and fragment (which may
			// hold secrets); a value that does not even parse is not echoed.
			shown := ""
			if raw, perr := url.Parse(strings.TrimSpace(cfg.upstream)); perr == nil {
				raw.RawQuery, raw.ForceQuery, raw.Fragment, raw.RawFragment = "", false, "", ""
				shown = fmt.Sprintf(" %q", raw.Redacted())
			}
			return cfg, fmt.Errorf("-upstream / UPSTREAM_URL%s %w", shown, err)
		}
		cfg.upstream = u.String()
	}
	switch cfg.logFormat = strings.ToLower(cfg.logFormat); cfg.logFormat {
	case "text", "json":
	default:
		return cfg, fmt.Errorf("-log-format / LOG_FORMAT %q is neither text nor json", cfg.logFormat)
	}
	if cfg.logLevel, err = parseLevel(logLevel); err != nil {
		return cfg, err
	}
	cfg.disablePlayground, cfg.disableIntrospection = !playground, !introspection
	d, err := time.ParseDuration(timeout)
	if err != nil || d <= 0 {
		return cfg, fmt.Errorf("upstream timeout %q is not a positive duration", timeout)
	}
	cfg.upstreamTimeout = d
	if cfg.maxUpstreamCalls, err = strconv.Atoi(maxCalls); err != nil || cfg.maxUpstreamCalls < 0 {
		return cfg, fmt.Errorf("max upstream calls %q is not a non-negative integer", maxCalls)
	}
	if cfg.maxDepth, err = strconv.Atoi(maxDepth); err != nil || cfg.maxDepth < 1 {
		return cfg, fmt.Errorf("max depth %q is not a positive integer", maxDepth)
	}
	if cfg.maxResponseBytes, err = strconv.Atoi(maxResponse); err != nil || cfg.maxResponseBytes < 1 {
		return cfg, fmt.Errorf("max response bytes %q is not a positive integer", maxResponse)
	}
	if cfg.maxBatch, err = strconv.Atoi(maxBatch); err != nil || cfg.maxBatch < 1 {
		return cfg, fmt.Errorf("max batch %q is not a positive integer", maxBatch)
	}
	if cacheTTL == "0" {
		cacheTTL = "0s"
	}
	if cfg.cacheTTL, err = time.ParseDuration(cacheTTL); err != nil || cfg.cacheTTL < 0 {
		return cfg, fmt.Errorf("cache TTL %q is not a duration", cacheTTL)
	}
	if cfg.operationTimeout, err = time.ParseDuration(opTimeout); err != nil || cfg.operationTimeout <= 0 {
		return cfg, fmt.Errorf("operation timeout %q is not a positive duration", opTimeout)
	}
	if cfg.corsOrigins, err = parseOrigins(corsOrigins); err != nil {
		return cfg, err
	}
	return cfg, checkRedis(cfg)
}

// checkRedis checks the Redis settings: a URL Open accepts (never echoed:
// it may hold a password) and, with it, a secret long enough.
func checkRedis(cfg config) error {
	if cfg.redisURL == "" {
		return nil
	}
	if err := redisstate.CheckURL(cfg.redisURL); err != nil {
		return fmt.Errorf("-redis-url / REDIS_URL: %w", err)
	}
	if len(cfg.redisSecret) < redisstate.MinSecretBytes {
		return fmt.Errorf("-redis-secret / REDIS_SECRET must be set with -redis-url, at least %d bytes, the same on every replica", redisstate.MinSecretBytes)
	}
	return nil
}

// parseLevel reads a log level: debug, info, warn or error.
func parseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("-log-level / LOG_LEVEL %q is none of debug, info, warn and error", s)
}

// newLogger returns the server's logger: text or JSON lines on w, from
// level up; lines logged with a request's context carry its id.
func newLogger(w io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(requestid.LogHandler(h))
}

// version returns the version of this build: the module's version when
// built from a tagged module (go install …@v1.2.3), else the VCS revision
// and time when Go stamped them, else "devel".
func version() string { return versionOf(debug.ReadBuildInfo()) }

func versionOf(info *debug.BuildInfo, ok bool) string {
	if !ok {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, at, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+modified"
			}
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v := "devel-" + rev + modified
	if at != "" {
		v += " (" + at + ")"
	}
	return v
}

// parseOrigins splits a comma-separated list of CORS origins and checks
// each is one a browser could send: a scheme and a host, without the path
// or trailing slash that would make it match nothing, and without wildcards
// (the library would read "https://*.example.com" as a pattern).
func parseOrigins(list string) ([]string, error) {
	var origins []string
	for o := range strings.SplitSeq(list, ",") {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		if o != "*" {
			u, err := url.Parse(o)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
				u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(o, "*") {
				return nil, fmt.Errorf("CORS origin %q is neither an origin such as https://app.example.com nor *", o)
			}
		}
		origins = append(origins, o)
	}
	return origins, nil
}

// defaultGCPercent is the garbage collector's target (GOGC) when the
// environment sets none. The server's live heap is small (a few MiB without
// the cache), and Go's default of 100 then starts a collection every 4 MiB
// allocated: many times a second under load, where an operation allocates
// tens of KiB. At 400 the heap may grow to five times what is live before a
// collection, which cut the CPU of an operation from 64 keys by 40 % in
// BenchmarkOperation_ConcurrentDistinctKeys; GOMEMLIMIT (set from the
// container's limit in deploy/deployment.yaml) still caps the heap, the
// collector working harder as it nears the limit.
const defaultGCPercent = 400

// setGCPercent applies defaultGCPercent unless GOGC is set (the runtime has
// then applied it), and returns the GOGC in force, for the start line.
func setGCPercent(getenv func(string) string) string {
	if v := getenv("GOGC"); v != "" {
		return v
	}
	debug.SetGCPercent(defaultGCPercent)
	return strconv.Itoa(defaultGCPercent)
}

// tracingFlushTimeout bounds the export of the last spans on exit.
const tracingFlushTimeout = 5 * time.Second

// run serves until ctx is done, then shuts down gracefully.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := parseConfig(args, getenv)
	if err != nil {
		return err
	}
	if cfg.showVersion {
		fmt.Fprintln(stdout, "suregql", version())
		return nil
	}
	log := newLogger(stdout, cfg.logFormat, cfg.logLevel)
	log.Info("suregql starting", "version", version(), "gogc", setGCPercent(getenv))
	// Traces only when OTEL_TRACES_EXPORTER names an exporter (package
	// tracing); the spans not yet exported are flushed on the way out.
	tp, stopTracing, err := tracing.Setup(ctx)
	if err != nil {
		return err
	}
	defer func() {
		flushCtx, cancel := context.WithTimeout(context.Background(), tracingFlushTimeout)
		defer cancel()
		if err := stopTracing(flushCtx); err != nil {
			log.Warn("flushing traces failed", "err", err)
		}
	}()

	var playgroundKey string
	demo := cfg.upstream == ""
	if demo {
		demoURL, stopDemo, err := startDemoUpstream(ctx)
		if err != nil {
			return err
		}
		defer stopDemo()
		cfg.upstream = demoURL
		playgroundKey = restclienttest.DemoKey
	}
	upstream, err := restclient.New(cfg.upstream, restclient.WithHTTPClient(&http.Client{
		Timeout:   cfg.upstreamTimeout,
		Transport: restclient.NewTransport(cfg.upstreamTimeout),
	}))
	if err != nil {
		return err
	}

	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.addr, err)
	}
	var shared *redisstate.Store
	if cfg.redisURL != "" {
		if shared, err = redisstate.Open(cfg.redisURL, redisstate.Options{Secret: []byte(cfg.redisSecret), Log: log}); err != nil {
			_ = ln.Close()
			return fmt.Errorf("-redis-url / REDIS_URL: %w", err)
		}
		defer func() { _ = shared.Close() }()
		// The server starts whatever Redis's state: without it, requests
		// are answered from the upstream, and /readyz tells.
		if err := shared.Ping(); err != nil {
			log.Warn("redis check failed: serving without shared state until it answers", "reason", shared.Status().Reason)
		} else {
			log.Info("redis: state shared with the other replicas")
		}
	}
	m := metrics.New()
	errc := make(chan error, 2)
	if cfg.metricsAddr != "" {
		metricsURL, stopMetrics, err := serveMetrics(ctx, cfg.metricsAddr, m.Handler(), errc)
		if err != nil {
			_ = ln.Close()
			return err
		}
		defer stopMetrics()
		log.Info("metrics", "url", metricsURL+"/metrics")
	}
	srv := newHTTPServer(facade.New(facade.Config{
		Upstream: upstream, Log: log, PlaygroundAPIKey: playgroundKey, Demo: demo,
		MaxUpstreamCalls: cfg.maxUpstreamCalls, CacheTTL: cfg.cacheTTL,
		OperationTimeout: cfg.operationTimeout, CORSOrigins: cfg.corsOrigins,
		DisablePlayground: cfg.disablePlayground, DisableIntrospection: cfg.disableIntrospection,
		MaxDepth: cfg.maxDepth, MaxResponseBytes: cfg.maxResponseBytes, MaxBatch: cfg.maxBatch,
		Metrics: m, DisableMetricsEndpoint: cfg.metricsAddr != "",
		TracerProvider: tp, Redis: shared,
	}), cfg.operationTimeout)
	url := "http://" + displayAddr(ln.Addr())
	if demo {
		log.Warn("demo mode: serving the built-in demo upstream; set -upstream/UPSTREAM_URL for a real Sure server")
	} else {
		log.Info("upstream", "url", cfg.upstream)
	}
	if !cfg.disablePlayground {
		if demo {
			// The demo key is public: it opens the demo's sample data only.
			log.Info("playground", "url", url+"/", "demoKey", playgroundKey)
		} else {
			log.Info("playground", "url", url+"/")
		}
	}
	log.Info("graphql endpoint", "url", url+"/graphql")

	// The server starts whatever the upstream's state: /readyz tells it.
	probeCtx, stopProbe := context.WithCancel(ctx)
	probed := make(chan struct{})
	go func() {
		defer close(probed)
		probeUpstream(probeCtx, log, upstream)
	}()
	defer func() { stopProbe(); <-probed }()

	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: answering the requests in flight")
	// Operations end by their deadline: waiting a little longer lets every
	// one in flight answer.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.operationTimeout+5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// probeUpstream checks once that the upstream is a Sure server that
// answers, without spending any key's quota, and logs what it found.
func probeUpstream(ctx context.Context, log *slog.Logger, upstream *restclient.Client) {
	start := time.Now()
	err := upstream.Probe(ctx)
	took := time.Since(start).Round(time.Millisecond)
	switch {
	case err == nil:
		log.Info("upstream check: a Sure server answers", "duration", took)
	case ctx.Err() != nil: // shutting down
	default:
		log.Warn("upstream check failed: the server starts anyway, and /readyz answers 503 until the upstream answers",
			"reason", restclient.ProbeReason(err), "duration", took)
	}
}

// Limits of the server's connections, so that clients that send or read
// slowly (slowloris) cannot hold connections open for long.
const (
	readHeaderTimeout = 10 * time.Second
	// readTimeout covers the headers and a body of up to 1 MiB.
	readTimeout    = 30 * time.Second
	idleTimeout    = 2 * time.Minute
	maxHeaderBytes = 64 << 10 // the request line included: a GET query longer than this belongs in a POST
	// writeMargin is the time left to write an answer once the operation
	// has ended.
	writeMargin = 10 * time.Second
)

// newHTTPServer returns the server for handler, whose operations end
// within operationTimeout.
func newHTTPServer(handler http.Handler, operationTimeout time.Duration) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		// The write deadline starts once the headers are read, and the
		// operation's deadline when the handler starts, before the body is
		// read; so the answer is due by the later of the two plus the time
		// to write it. A shorter deadline would drop answers that the
		// operation still produced.
		WriteTimeout:   max(readTimeout, operationTimeout) + writeMargin,
		IdleTimeout:    idleTimeout,
		MaxHeaderBytes: maxHeaderBytes,
	}
}

// serveMetrics serves GET /metrics with h on a listener of its own at addr,
// with the main server's connection limits; a failure to serve is sent to
// errc. stop closes it.
func serveMetrics(ctx context.Context, addr string, h http.Handler, errc chan<- error) (baseURL string, stop func(), err error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("listen on %s for metrics: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := newHTTPServer(mux, 0)
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("metrics listener: %w", err)
		}
	}()
	return "http://" + displayAddr(ln.Addr()), func() { _ = srv.Close() }, nil
}

// demoReplyDelay is how long the demo's assistant takes to answer a
// message: long enough that a playground user sees the chat wait for it,
// short enough to read it again at once.
const demoReplyDelay = 2 * time.Second

// startDemoUpstream serves the fake Sure upstream on a loopback port, so
// that demo mode goes through the same HTTP client code as production. It
// plays today's Sure, whose assistant answers a message sent to a chat
// after demoReplyDelay: the playground shows the whole chat loop.
func startDemoUpstream(ctx context.Context) (baseURL string, stop func(), err error) {
	fake := restclienttest.New()
	fake.SetAssistant(demoReplyDelay)
	baseURL, stop, err = restclienttest.ServeLoopback(ctx, fake)
	if err != nil {
		return "", nil, fmt.Errorf("start demo upstream: %w", err)
	}
	return baseURL, stop, nil
}

// displayAddr turns a wildcard listen address into one a browser can open.
func displayAddr(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}
