// Command loadbench drives the production facade under concurrent load, over
// real HTTP on loopback, against the fake Sure upstream (restclienttest)
// answering after a fixed latency. For six workloads it prints one Markdown
// row: upstream calls per operation, requests per second, p50 and p99
// latency, with one API key and with many keys, and the p50 of one client
// alone at a higher upstream latency.
//
//	go run ./cmd/loadbench > /tmp/load.md
//
// With one key, concurrent operations may share upstream calls (the facade
// coalesces identical GETs in flight per key); with many keys, each worker
// owns its keys, so no two operations in flight can share a call. Every
// answer is checked; any error is counted and makes the command exit 1.
//
// Everything listens on 127.0.0.1 only, and -n, -c and -timeout bound the
// run. BENCHMARKS.md holds a run's output.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"suregql/facade"
	"suregql/restclient"
	"suregql/restclienttest"
)

// Bounds on the flags, so that a typo cannot turn the benchmark into a
// flood of the machine.
const (
	maxRequests    = 100_000
	maxConcurrency = 256
	maxTimeout     = 10 * time.Minute
)

type config struct {
	latency, seqLatency time.Duration
	c, n, seqN          int
	timeout             time.Duration // cap of each measured run
}

// workload is one GraphQL operation, repeated.
type workload struct {
	name, query string
	vars        map[string]any
}

// result is what one run of a workload measured.
type result struct {
	done, errs  int
	firstErr    error
	callsPerOp  float64
	rps         float64
	p50, p99    time.Duration
	cappedEarly bool // the time cap ended the run before n requests
}

func main() {
	var cfg config
	flag.DurationVar(&cfg.latency, "latency", time.Millisecond, "upstream latency of the concurrent runs")
	flag.DurationVar(&cfg.seqLatency, "seq-latency", 20*time.Millisecond, "upstream latency of the sequential run")
	flag.IntVar(&cfg.c, "c", 32, "concurrent clients")
	flag.IntVar(&cfg.n, "n", 3000, "requests per workload and mode")
	flag.IntVar(&cfg.seqN, "seq-n", 50, "requests per workload of the sequential run")
	flag.DurationVar(&cfg.timeout, "timeout", time.Minute, "time cap of each run")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (generator, facade and fake share the process) to this file")
	flag.Parse()
	if cfg.c < 1 || cfg.c > maxConcurrency || cfg.n < 1 || cfg.n > maxRequests ||
		cfg.seqN < 1 || cfg.seqN > maxRequests || cfg.timeout <= 0 || cfg.timeout > maxTimeout {
		fmt.Fprintf(os.Stderr, "loadbench: need 1 <= -c <= %d, 1 <= -n, -seq-n <= %d, 0 < -timeout <= %s\n",
			maxConcurrency, maxRequests, maxTimeout)
		os.Exit(2)
	}
	if err := profiled(*cpuProfile, func() error { return run(os.Stdout, cfg) }); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

// profiled runs f, under the CPU profiler when path is not empty.
func profiled(path string, f func() error) error {
	if path == "" {
		return f()
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		_ = out.Close()
		return err
	}
	err = f()
	pprof.StopCPUProfile()
	return errors.Join(err, out.Close())
}

func run(w io.Writer, cfg config) error {
	fake := restclienttest.New()
	// Each worker owns two keys, used in turn: 64 keys at -c 32.
	manyKeys := make([]string, 2*cfg.c)
	for i := range manyKeys {
		manyKeys[i] = fmt.Sprintf("loadbench-key-%d", i)
		fake.AddKey(manyKeys[i], restclienttest.DemoKey)
	}
	// The runs send far more than an hour's budget of a real key.
	for _, k := range append([]string{restclienttest.DemoKey}, manyKeys...) {
		fake.SetRateLimit(k, 1<<30)
	}

	upURL, stopUp, err := restclienttest.ServeLoopback(context.Background(), fake)
	if err != nil {
		return err
	}
	defer stopUp()
	// The facade's client as the server builds it (server.go).
	tr := restclient.NewTransport(0)
	defer tr.CloseIdleConnections()
	client, err := restclient.New(upURL, restclient.WithHTTPClient(&http.Client{Timeout: time.Minute, Transport: tr}))
	if err != nil {
		return err
	}
	gqlURL, stop, err := restclienttest.ServeLoopback(context.Background(), facade.New(facade.Config{Upstream: client, Log: slog.New(slog.DiscardHandler)}))
	if err != nil {
		return err
	}
	defer stop()
	gqlURL += "/graphql"

	// The load generator keeps a connection per worker open, so that the
	// figures do not include connection setup.
	lt := http.DefaultTransport.(*http.Transport).Clone()
	lt.MaxIdleConns, lt.MaxIdleConnsPerHost = cfg.c, cfg.c
	defer lt.CloseIdleConnections()
	hc := &http.Client{Timeout: time.Minute, Transport: lt}

	wls, err := workloads(fake, hc, gqlURL)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "c=%d, n=%d per workload and mode, upstream latency %s; sequential: 1 client, %d requests, latency %s\n\n",
		cfg.c, cfg.n, cfg.latency, cfg.seqN, cfg.seqLatency)
	fmt.Fprintf(w, "| workload | 1 key: calls/op | req/s | p50 ms | p99 ms | %d keys: calls/op | req/s | p50 ms | p99 ms | sequential p50 ms |\n", len(manyKeys))
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	// A burst first, not reported: it opens the connections of both pools
	// and grows the heaps, which would otherwise be charged to W1.
	fake.SetDelay(cfg.latency)
	for _, k := range [][]string{{restclienttest.DemoKey}, manyKeys} {
		measure(fake, hc, gqlURL, wls[0], cfg.c, 10*cfg.c, cfg.timeout, func(worker, i int) string { return k[(worker+i)%len(k)] })
	}
	errs := 0
	var firstErr error
	for _, wl := range wls {
		fake.SetDelay(cfg.latency)
		one := measure(fake, hc, gqlURL, wl, cfg.c, cfg.n, cfg.timeout, func(int, int) string { return restclienttest.DemoKey })
		many := measure(fake, hc, gqlURL, wl, cfg.c, cfg.n, cfg.timeout, func(worker, i int) string {
			return manyKeys[worker+cfg.c*(i%2)]
		})
		fake.SetDelay(cfg.seqLatency)
		seq := measure(fake, hc, gqlURL, wl, 1, cfg.seqN, cfg.timeout, func(int, int) string { return restclienttest.DemoKey })
		fmt.Fprintf(w, "| %s | %s | %s | %s%s |\n", wl.name, cells(one), cells(many), ms(seq.p50), capped(seq))
		for _, r := range []result{one, many, seq} {
			errs += r.errs
			if firstErr == nil {
				firstErr = r.firstErr
			}
		}
	}
	if errs > 0 {
		return fmt.Errorf("%d answers failed; first: %w", errs, firstErr)
	}
	return nil
}

func cells(r result) string {
	return fmt.Sprintf("%.2f | %.0f | %s | %s%s", r.callsPerOp, r.rps, ms(r.p50), ms(r.p99), capped(r))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }

// capped marks a figure whose run the time cap ended early.
func capped(r result) string {
	if r.cappedEarly {
		return fmt.Sprintf(" (capped at %d)", r.done)
	}
	return ""
}

// workloads returns the six operations, with the ids and the cursor they
// need taken from the fake and from the facade itself.
func workloads(fake *restclienttest.Server, hc *http.Client, url string) ([]workload, error) {
	sub, ok := fake.CategoryByName(restclienttest.DemoKey, "Restaurants")
	if !ok || sub.ParentID == "" {
		return nil, errors.New("the demo family has no subcategory Restaurants")
	}
	imports := fake.ImportIDs(restclienttest.DemoKey)
	if len(imports) == 0 {
		return nil, errors.New("the demo family has no import")
	}
	// W6 starts after offset 29: its cursor is the 30th edge of a first
	// window, as a client paging forward would have it.
	var first struct {
		Categories struct{ Edges []struct{ Cursor string } }
	}
	if err := post(hc, url, restclienttest.DemoKey, `{ categories(first: 30) { edges { cursor } } }`, nil, &first); err != nil {
		return nil, fmt.Errorf("cursor of offset 29: %w", err)
	}
	if len(first.Categories.Edges) != 30 {
		return nil, fmt.Errorf("cursor of offset 29: got %d edges", len(first.Categories.Edges))
	}
	return []workload{
		{name: "W1 categories(first: 10)", query: `{ categories(first: 10) { nodes { id name } } }`},
		{name: "W2 roots with subcategories", query: `{ categories(rootsOnly: true, first: 100) { nodes { name subcategories(first: 50) { nodes { name } } } } }`},
		{name: "W3 category(id) { parent { name color } }", vars: map[string]any{"id": sub.ID},
			query: `query($id: ID!) { category(id: $id) { name parent { name color } } }`},
		{name: "W4 import(id) { status }", vars: map[string]any{"id": imports[0]},
			query: `query($id: ID!) { import(id: $id) { status } }`},
		{name: "W5 chats(first: 20)", query: `{ chats(first: 20) { nodes { id title } } }`},
		{name: "W6 categories(first: 30) at offset 30", vars: map[string]any{"after": first.Categories.Edges[29].Cursor},
			query: `query($after: String) { categories(first: 30, after: $after) { nodes { name } } }`},
	}, nil
}

// measure sends n requests of wl from c workers, each waiting for its
// answer before sending the next, and stops early at the time cap. keyOf
// names the API key of a worker's i-th request.
func measure(fake *restclienttest.Server, hc *http.Client, url string, wl workload, c, n int,
	timeout time.Duration, keyOf func(worker, i int) string) result {
	// One request first, not measured: the facade parses and caches the
	// query, and every worker's connection is then warm enough.
	_ = post(hc, url, restclienttest.DemoKey, wl.query, wl.vars, nil)
	fake.Reset()

	var (
		next     atomic.Int64
		mu       sync.Mutex
		lat      = make([]time.Duration, 0, n)
		errs     int
		firstErr error
		wg       sync.WaitGroup
	)
	deadline := time.Now().Add(timeout)
	start := time.Now()
	for worker := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; int(next.Add(1)) <= n && time.Now().Before(deadline); i++ {
				t0 := time.Now()
				err := post(hc, url, keyOf(worker, i), wl.query, wl.vars, nil)
				d := time.Since(t0)
				mu.Lock()
				lat = append(lat, d)
				if err != nil {
					errs++
					if firstErr == nil {
						firstErr = fmt.Errorf("%s: %w", wl.name, err)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)

	slices.Sort(lat)
	r := result{done: len(lat), errs: errs, firstErr: firstErr, cappedEarly: len(lat) < n}
	if r.done > 0 {
		r.callsPerOp = float64(fake.Calls()) / float64(r.done)
		r.rps = float64(r.done) / elapsed.Seconds()
		r.p50 = lat[r.done*50/100]
		r.p99 = lat[min(r.done*99/100, r.done-1)]
	}
	return r
}

// post runs one operation and decodes its data into out (nil: discard).
// Any error entry, a status other than 200 or a missing data is a failure:
// none of the workloads should produce one.
func post(hc *http.Client, url, key, query string, vars map[string]any, out any) error {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", key)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var ans struct {
		Data   json.RawMessage
		Errors []struct{ Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
		return fmt.Errorf("status %d: %w", resp.StatusCode, err)
	}
	switch {
	case len(ans.Errors) > 0:
		return fmt.Errorf("status %d: %s", resp.StatusCode, ans.Errors[0].Message)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("status %d", resp.StatusCode)
	case len(ans.Data) == 0 || string(ans.Data) == "null":
		return errors.New("no data")
	case out != nil:
		return json.Unmarshal(ans.Data, out)
	}
	return nil
}
