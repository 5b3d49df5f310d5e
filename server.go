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
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"github.com/suregql/suregql/internal/config"
	"github.com/suregql/suregql/internal/edge/gqlhttp"
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

// newLogger returns the server's logger: text or JSON lines on w, from
// level up; lines logged with a request's context carry its id, and its
// trace's and span's ids when it is traced.
func newLogger(w io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(requestid.LogHandler(h))
}

// version and revision name the build when the build stamps them:
//
//	go build -ldflags "-X main.version=1.2.3 -X main.revision=0123abcd" .
//
// as the Dockerfile does from its VERSION and REVISION build arguments
// (its build context has no .git, so Go stamps no VCS data there).
var version, revision string

// buildVersion returns the version of this build: the stamped version,
// else the module's version when built from a tagged module (go install
// …@v1.2.3), else the VCS revision and time when Go stamped them, else
// "devel".
func buildVersion() string {
	if version != "" {
		return version
	}
	return versionOf(debug.ReadBuildInfo())
}

// buildRevision returns the VCS revision of this build: the stamped one,
// else Go's VCS stamp, else "".
func buildRevision() string {
	if revision != "" {
		return revision
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return ""
}

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

// run serves until ctx is done (SIGTERM or SIGINT), then shuts down
// gracefully (see serve).
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	return runWith(ctx, args, getenv, stdout, time.After)
}

// runWith is run with the timer of the shutdown delay: tests pass one they
// fire themselves.
func runWith(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer, after func(time.Duration) <-chan time.Time) error {
	cfg, err := config.Parse(args, getenv)
	if err != nil {
		return err
	}
	v := buildVersion()
	if cfg.ShowVersion {
		fmt.Fprintln(stdout, "suregql", v)
		return nil
	}
	log := newLogger(stdout, cfg.LogFormat, cfg.LogLevel)
	// The first line, before anything that may wait (the upstream, Redis).
	log.Info("suregql starting", "version", v, "gogc", setGCPercent(getenv))
	// SIGHUP, which process managers send to reload, is logged and
	// ignored (serve logs it): the configuration is read once, at start (Go's default
	// would end the process).
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	// Traces only when OTEL_TRACES_EXPORTER names an exporter (package
	// tracing), their spans of service.version v, on standard error with
	// the console exporter; the spans not yet exported are flushed on the
	// way out.
	tp, stopTracing, err := tracing.Setup(ctx, tracing.Options{Version: v, Log: log})
	if err != nil {
		return err
	}
	defer flushTraces(log, stopTracing)

	// A manifest that does not load (or whose hashes do not match its
	// documents) stops the start, before anything listens.
	var docs *gqlhttp.Documents
	if cfg.PersistedDocuments != "" {
		if docs, err = gqlhttp.LoadDocuments(cfg.PersistedDocuments, !cfg.RefuseArbitraryDocuments); err != nil {
			return err
		}
		log.Info("persisted documents", "file", cfg.PersistedDocuments, "documents", docs.Len(), "onlyThese", docs.OnlyThese())
	}
	up, err := startUpstream(ctx, cfg)
	if err != nil {
		return err
	}
	defer up.stop()
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	shared, err := openRedis(cfg, log)
	if err != nil {
		_ = ln.Close()
		return err
	}
	if shared != nil {
		defer func() { _ = shared.Close() }()
	}
	m := metrics.New()
	m.SetBuildInfo(v, buildRevision())
	errc := make(chan error, 2)
	if cfg.MetricsAddr != "" {
		metricsURL, stopMetrics, err := serveMetrics(ctx, cfg.MetricsAddr, m.Handler(), errc)
		if err != nil {
			_ = ln.Close()
			return err
		}
		defer stopMetrics()
		log.Info("metrics", "url", metricsURL+"/metrics")
	}
	// One breaker for every caller of the upstream: a dead upstream costs
	// a few dozen calls, not three per request. Its probe waits a fifth of
	// an upstream call's time (2 s of the default 10 s): an upstream that
	// is back answers a cheap read well within it.
	breaker := restclient.NewBreaker(restclient.BreakerOptions{Log: log, ProbeTimeout: cfg.UpstreamTimeout / 5})
	draining := make(chan struct{})
	srv := newHTTPServer(facade.New(facade.Config{
		Upstream: up.client, Log: log, PlaygroundAPIKey: up.playgroundKey, Demo: up.demo,
		MaxUpstreamCalls: cfg.MaxUpstreamCalls, CacheTTL: cfg.CacheTTL, StaleMax: cfg.StaleMax, CacheBytes: cfg.CacheBytes,
		OperationTimeout: cfg.OperationTimeout, CORSOrigins: cfg.CORSOrigins, CORSHeaders: cfg.CORSHeaders,
		DisablePlayground: cfg.DisablePlayground, DisableIntrospection: cfg.DisableIntrospection,
		MaxDepth: cfg.MaxDepth, MaxResponseBytes: cfg.MaxResponseBytes, MaxBatch: cfg.MaxBatch,
		MaxSubscriptionsPerKey: cfg.MaxSubscriptionsPerKey, MaxSubscriptions: cfg.MaxSubscriptions,
		MaxWebSockets: cfg.MaxWebSockets, MaxWebSocketsPerAddress: cfg.MaxWebSocketsPerAddress, WebSocketIdleTimeout: cfg.WebSocketIdleTimeout,
		Metrics: m, DisableMetricsEndpoint: cfg.MetricsAddr != "",
		TracerProvider: tp, Redis: shared, Documents: docs, Breaker: breaker, Draining: draining, Version: v,
		NewKeyCalls: cfg.NewKeyCalls, ForwardBaggage: cfg.TraceBaggage,
	}), cfg.OperationTimeout)
	logEndpoints(log, cfg, up, "http://"+displayAddr(ln.Addr()))

	// The server starts whatever the upstream's state: /readyz?verbose
	// tells it.
	probeCtx, stopProbe := context.WithCancel(ctx)
	probed := make(chan struct{})
	go func() {
		defer close(probed)
		probeUpstream(probeCtx, log, up.client)
	}()
	defer func() { stopProbe(); <-probed }()

	return serve(ctx, log, srv, ln, errc, shutdown{
		delay: cfg.ShutdownDelay, after: after, draining: draining, hup: hup,
		operationTimeout: cfg.OperationTimeout,
	})
}

// shutdown is how serve stops.
type shutdown struct {
	// delay is how long the server serves on once ctx is done, /readyz
	// answering 503 (draining closed), so that load balancers stop
	// sending before the listener closes; after is its timer.
	delay    time.Duration
	after    func(time.Duration) <-chan time.Time
	draining chan struct{}
	// hup receives SIGHUP, which is logged and ignored.
	hup <-chan os.Signal
	// operationTimeout bounds the requests in flight, which the drain
	// waits for.
	operationTimeout time.Duration
}

// serve serves srv on ln until ctx is done; then /readyz turns 503 at once
// while the server serves on for sd.delay (a load balancer takes a few
// seconds to stop sending to a replica that is going away), and then it
// shuts down, letting the requests in flight answer within the operation
// timeout. A listener that fails (errc, where srv's failure is also sent)
// ends it at once.
func serve(ctx context.Context, log *slog.Logger, srv *http.Server, ln net.Listener, errc chan error, sd shutdown) error {
	go func() { errc <- srv.Serve(ln) }()
	if err := awaitStop(ctx, log, errc, sd.hup); err != nil {
		return err
	}
	close(sd.draining)
	if sd.delay > 0 {
		log.Info("shutting down: /readyz answers 503; serving on for the shutdown delay", "delay", sd.delay)
		select {
		case err := <-errc:
			return err
		case <-sd.after(sd.delay):
		}
	}
	log.Info("shutting down: answering the requests in flight")
	// Operations end by their deadline: waiting a little longer lets every
	// one in flight answer.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), sd.operationTimeout+5*time.Second)
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

// awaitStop waits until ctx is done (nil) or a listener fails (its
// error), logging each SIGHUP on the way.
func awaitStop(ctx context.Context, log *slog.Logger, errc <-chan error, hup <-chan os.Signal) error {
	for {
		select {
		case err := <-errc:
			return err
		case <-hup:
			log.Info("SIGHUP received: ignored; the configuration is read at start only (restart to change it)")
		case <-ctx.Done():
			return nil
		}
	}
}

// flushTraces exports the spans not yet exported, within
// tracingFlushTimeout.
func flushTraces(log *slog.Logger, stopTracing func(context.Context) error) {
	flushCtx, cancel := context.WithTimeout(context.Background(), tracingFlushTimeout)
	defer cancel()
	if err := stopTracing(flushCtx); err != nil {
		log.Warn("flushing traces failed", "err", err)
	}
}

// upstream is the Sure server the facade calls: the configured one, or the
// demo upstream this process serves.
type upstream struct {
	client *restclient.Client
	url    string
	// demo: the built-in demo upstream, whose public key the playground
	// is given (playgroundKey).
	demo          bool
	playgroundKey string
	stop          func()
}

// startUpstream returns the client of the configured upstream, after
// starting the demo upstream when none is.
func startUpstream(ctx context.Context, cfg config.Config) (upstream, error) {
	up := upstream{url: cfg.Upstream, stop: func() {}}
	if up.url == "" {
		demoURL, stopDemo, err := startDemoUpstream(ctx)
		if err != nil {
			return upstream{}, err
		}
		up = upstream{url: demoURL, demo: true, playgroundKey: restclienttest.DemoKey, stop: stopDemo}
	}
	client, err := restclient.New(up.url, restclient.WithHTTPClient(&http.Client{
		Timeout:   cfg.UpstreamTimeout,
		Transport: restclient.NewTransport(cfg.UpstreamTimeout),
	}))
	if err != nil {
		up.stop()
		return upstream{}, err
	}
	up.client = client
	return up, nil
}

// openRedis opens the Redis shared by the replicas, nil when none is
// configured, and checks it at once (a PING and a sealed round trip with
// the secret, redisstate.Check): a password Redis refuses is a
// configuration error, which stops the start with one line; a Redis that
// does not answer is logged with its reason, and the server starts
// without shared state until it answers (/readyz?verbose and
// suregql_redis_up tell from the first second).
func openRedis(cfg config.Config, log *slog.Logger) (*redisstate.Store, error) {
	if cfg.RedisURL == "" {
		return nil, nil
	}
	shared, err := redisstate.Open(cfg.RedisURL, redisstate.Options{Secret: []byte(cfg.RedisSecret), Timeout: cfg.RedisTimeout, Log: log})
	if err != nil {
		return nil, fmt.Errorf("-redis-url / REDIS_URL: %w", err)
	}
	var ce *redisstate.CheckError
	switch err := shared.Check(); {
	case err == nil:
		log.Info("redis: state shared with the other replicas")
	case errors.As(err, &ce) && ce.Reason == "auth":
		_ = shared.Close()
		return nil, err
	default:
		reason := "error"
		if ce != nil {
			reason = ce.Reason
		}
		log.Warn("redis check failed: serving without shared state until it answers", "reason", reason)
	}
	return shared, nil
}

// logEndpoints logs the upstream and the URLs served at baseURL.
func logEndpoints(log *slog.Logger, cfg config.Config, up upstream, baseURL string) {
	if up.demo {
		log.Warn("demo mode: serving the built-in demo upstream; set -upstream/UPSTREAM_URL for a real Sure server")
	} else {
		log.Info("upstream", "url", up.url)
	}
	switch {
	case cfg.DisablePlayground:
	case up.demo:
		// The demo key is public: it opens the demo's sample data only.
		log.Info("playground", "url", baseURL+"/", "demoKey", up.playgroundKey)
	default:
		log.Info("playground", "url", baseURL+"/")
	}
	log.Info("graphql endpoint", "url", baseURL+"/graphql")
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
		log.Warn("upstream check failed: the server starts anyway, ready; requests that need the upstream answer UPSTREAM_UNAVAILABLE until it answers (see /readyz?verbose)",
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

// demoImportStep is how long the demo's moving import stays pending, then
// importing: importUpdated shows it move. Once it is complete, the next
// read of the imports adds another.
const demoImportStep = 20 * time.Second

// startDemoUpstream serves the fake Sure upstream on a loopback port, so
// that demo mode goes through the same HTTP client code as production. It
// plays today's Sure, whose assistant answers a message sent to a chat
// after demoReplyDelay: the playground shows the whole chat loop; and
// whose newest import is pending, importing after demoImportStep and
// complete after twice that, followed by another.
func startDemoUpstream(ctx context.Context) (baseURL string, stop func(), err error) {
	fake := restclienttest.New()
	fake.SetAssistant(demoReplyDelay)
	fake.AddRepeatingImports(restclienttest.DemoKey, demoImportStep)
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
