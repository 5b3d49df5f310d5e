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
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"suregql/facade"
	"suregql/restclient"
	"suregql/restclienttest"
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
	maxDepth         int
	maxResponseBytes int
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
	maxDepth := env("MAX_DEPTH", strconv.Itoa(facade.DefaultMaxDepth))
	fs.StringVar(&maxDepth, "max-depth", maxDepth, "deepest nesting of fields allowed in an operation (env MAX_DEPTH)")
	maxResponse := env("MAX_RESPONSE_BYTES", strconv.Itoa(facade.DefaultMaxResponseBytes))
	fs.StringVar(&maxResponse, "max-response-bytes", maxResponse, "largest data of one answer, in bytes; larger answers are refused with RESPONSE_TOO_LARGE (env MAX_RESPONSE_BYTES)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
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
	return cfg, nil
}

// run serves until ctx is done, then shuts down gracefully.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := parseConfig(args, getenv)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stdout, nil))

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
	upstream, err := restclient.New(cfg.upstream, restclient.WithHTTPClient(&http.Client{Timeout: cfg.upstreamTimeout}))
	if err != nil {
		return err
	}

	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.addr, err)
	}
	srv := &http.Server{
		Handler: facade.New(facade.Config{
			Upstream: upstream, Log: log, PlaygroundAPIKey: playgroundKey,
			MaxUpstreamCalls: cfg.maxUpstreamCalls, CacheTTL: cfg.cacheTTL,
			MaxDepth: cfg.maxDepth, MaxResponseBytes: cfg.maxResponseBytes,
		}),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	url := "http://" + displayAddr(ln.Addr())
	if playgroundKey != "" {
		fmt.Fprintf(stdout, "demo mode: no -upstream given, serving the built-in demo Sure upstream\n")
		fmt.Fprintf(stdout, "playground: %s/  (API key %q is pre-filled in the headers tab)\n", url, playgroundKey)
	} else {
		fmt.Fprintf(stdout, "upstream: %s\nplayground: %s/\n", cfg.upstream, url)
	}
	fmt.Fprintf(stdout, "graphql endpoint: %s/graphql\n", url)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
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
