package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/restclient"
)

// How the facade under test runs (-ours).
const (
	// oursProcess runs the production binary, built from this module, as a
	// process of its own: the way it is deployed, and the way Tailcall runs
	// beside it, so that neither shares its heap or scheduler with the load
	// generator and the fake.
	oursProcess = "process"
	// oursInProcess serves facade.New from this process, over loopback:
	// one CPU profile (-cpuprofile) then covers the facade too.
	oursInProcess = "in-process"
)

// startOurs starts the facade over the upstream at upURL, the way -ours
// says, and returns its GraphQL endpoint and how to stop it;
// proc is its process (nil in this one).
func startOurs(ctx context.Context, how, upURL string) (url string, proc *serverProcess, stop func() error, err error) {
	switch how {
	case oursInProcess:
		url, stop, err = serveInProcess(ctx, upURL)
		return url, nil, stop, err
	case oursProcess:
		p, err := startOursProcess(ctx, upURL)
		if err != nil {
			return "", nil, nil, err
		}
		return p.url, p, p.stop, nil
	}
	return "", nil, nil, fmt.Errorf("-ours %q is neither %s nor %s", how, oursProcess, oursInProcess)
}

// serveInProcess serves facade.New over a restclient built as server.go
// builds it.
func serveInProcess(ctx context.Context, upURL string) (string, func() error, error) {
	tr := restclient.NewTransport(0)
	client, err := restclient.New(upURL, restclient.WithHTTPClient(&http.Client{Timeout: time.Minute, Transport: tr}))
	if err != nil {
		return "", nil, err
	}
	gqlURL, stop, err := restclienttest.ServeLoopback(ctx, facade.New(facade.Config{Upstream: client, Log: slog.New(slog.DiscardHandler), CacheTTL: facade.CacheOff}))
	if err != nil {
		return "", nil, err
	}
	return gqlURL + "/graphql", func() error { stop(); tr.CloseIdleConnections(); return nil }, nil
}

// startOursProcess builds the server (package suregql, the module's main)
// into a temporary directory and runs it on a free port of 127.0.0.1 over
// upURL, with its default settings except the log level: warnings and
// errors only, as Tailcall runs with TAILCALL_LOG_LEVEL=error, since a line
// per operation is the operator's choice, not the engine's cost.
func startOursProcess(ctx context.Context, upURL string) (*serverProcess, error) {
	dir, err := os.MkdirTemp("", "loadbench-suregql-")
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "suregql")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/suregql/suregql")
	if out, err := build.CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("go build suregql: %w\n%s", err, out)
	}
	port, err := freeLoopbackPort(ctx)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	p, err := startProcess(ctx, "suregql", bin,
		// No shutdown delay: no load balancer to leave; it would outlast
		// processStopTimeout. The cache off: freshness (on by default)
		// would answer every operation but the first, which Tailcall,
		// over the same upstream, does not do.
		[]string{"-addr", "127.0.0.1:" + strconv.Itoa(port), "-upstream", upURL, "-log-level", "warn", "-shutdown-delay", "0", "-cache-ttl", "0"},
		nil, base+"/readyz")
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	p.dir, p.url = dir, base+"/graphql"
	return p, nil
}
