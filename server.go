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
	"strconv"
	"strings"
	"syscall"
	"time"

	"suregql/facade"
	"suregql/metrics"
	"suregql/restclient"
	"suregql/restclienttest"
	"suregql/tracing"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
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
	metricsAddr      string // empty: /metrics on the main listener
	// Off switches, so that the zero value serves both.
	disablePlayground    bool
	disableIntrospection bool
}

func parseConfig(args []string, getenv func(string) string) (config, error) {
	fs := flag.NewFlagSet("suregql", flag.ContinueOnError)
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
	fs.StringVar(&cfg.metricsAddr, "metrics-addr", env("METRICS_ADDR", ""),
		"serve GET /metrics on this address instead of the main listener, e.g. :9090 (env METRICS_ADDR)")
	if err := fs.Parse(args); err != nil {
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
	return cfg, nil
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

// tracingFlushTimeout bounds the export of the last spans on exit.
const tracingFlushTimeout = 5 * time.Second

// run serves until ctx is done, then shuts down gracefully.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := parseConfig(args, getenv)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stdout, nil))
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
	if cfg.upstream == "" {
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
	m := metrics.New()
	errc := make(chan error, 2)
	if cfg.metricsAddr != "" {
		metricsURL, stopMetrics, err := serveMetrics(ctx, cfg.metricsAddr, m.Handler(), errc)
		if err != nil {
			_ = ln.Close()
			return err
		}
		defer stopMetrics()
		fmt.Fprintf(stdout, "metrics: %s/metrics\n", metricsURL)
	}
	srv := newHTTPServer(facade.New(facade.Config{
		Upstream: upstream, Log: log, PlaygroundAPIKey: playgroundKey,
		MaxUpstreamCalls: cfg.maxUpstreamCalls, CacheTTL: cfg.cacheTTL,
		OperationTimeout: cfg.operationTimeout, CORSOrigins: cfg.corsOrigins,
		DisablePlayground: cfg.disablePlayground, DisableIntrospection: cfg.disableIntrospection,
		MaxDepth: cfg.maxDepth, MaxResponseBytes: cfg.maxResponseBytes,
		Metrics: m, DisableMetricsEndpoint: cfg.metricsAddr != "",
		TracerProvider: tp,
	}), cfg.operationTimeout)
	url := "http://" + displayAddr(ln.Addr())
	switch {
	case playgroundKey != "":
		fmt.Fprintf(stdout, "demo mode: no -upstream given, serving the built-in demo Sure upstream\n")
		if !cfg.disablePlayground {
			fmt.Fprintf(stdout, "playground: %s/  (API key %q is pre-filled in the headers tab)\n", url, playgroundKey)
		}
	case cfg.disablePlayground:
		fmt.Fprintf(stdout, "upstream: %s\n", cfg.upstream)
	default:
		fmt.Fprintf(stdout, "upstream: %s\nplayground: %s/\n", cfg.upstream, url)
	}
	fmt.Fprintf(stdout, "graphql endpoint: %s/graphql\n", url)

	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
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
	return nil
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

// startDemoUpstream serves the fake Sure upstream on a loopback port, so
// that demo mode goes through the same HTTP client code as production.
func startDemoUpstream(ctx context.Context) (baseURL string, stop func(), err error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("start demo upstream: %w", err)
	}
	srv := &http.Server{Handler: restclienttest.New(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
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
