// Command loadbench drives the production facade under concurrent load, over
// real HTTP on loopback, against the fake Sure upstream (restclienttest)
// answering after a fixed latency. The facade is the server binary, built
// from this module and run as a process of its own (-ours process), or
// facade.New in this process (-ours in-process). For six workloads it
// prints one Markdown row: upstream calls per operation, requests per
// second, p50 and p99 latency and the server process's CPU time per answer,
// with one API key and with many keys, and the p50 of one client alone at a
// higher upstream latency.
//
//	go run ./cmd/loadbench > /tmp/load.md
//
// With one key, concurrent operations may share upstream calls (the facade
// coalesces identical GETs in flight per key); with many keys, each worker
// owns its keys, so no two operations in flight can share a call. Every
// answer is checked (no error, the number of items the fake's data says);
// any failure is counted and makes the command exit 1.
//
// With -floor, a Go net/http server that answers every request with the
// facade's own answer to the workload, and does nothing else, runs beside
// them as a process of its own: its CPU per answer is what net/http alone
// costs, the part of the facade's that no work on GraphQL can remove.
//
// With -tailcall, a Tailcall 1.0 binary runs as a subprocess over the same
// fake, serving bench/tailcall/sure.graphql, and each workload's runs
// alternate between the facade and Tailcall; the output is then one table
// per mode with both figures and their ratio in each cell:
//
//	go run ./cmd/loadbench -tailcall /path/to/tailcall > /tmp/side-by-side.md
//
// Everything listens on 127.0.0.1 only, and -n, -c and -timeout bound the
// run. BENCHMARKS.md holds a run's output and how to install Tailcall.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/suregql/suregql/internal/fake/restclienttest"
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
	// tailcall is the path of a Tailcall binary to run side by side ("":
	// ours alone), serving tailcallConfig.
	tailcall, tailcallConfig string
	// ours says how the facade runs: oursProcess or oursInProcess.
	ours string
	// floor adds the net/http floor (see floor.go) to the targets.
	floor bool
}

// result is what one run of a workload measured.
type result struct {
	done, errs int
	firstErr   error
	callsPerOp float64
	rps        float64
	p50, p99   time.Duration
	// cpuPerOp is the CPU time the server's process spent per answer (0:
	// not known, when the server is not a process of its own).
	cpuPerOp    time.Duration
	cappedEarly bool // the time cap ended the run before n requests
}

func main() {
	if addr := os.Getenv(floorEnv); addr != "" {
		if err := serveFloor(addr); err != nil {
			fmt.Fprintln(os.Stderr, "loadbench: the floor:", err)
			os.Exit(1)
		}
		return
	}
	var cfg config
	flag.DurationVar(&cfg.latency, "latency", time.Millisecond, "upstream latency of the concurrent runs")
	flag.DurationVar(&cfg.seqLatency, "seq-latency", 20*time.Millisecond, "upstream latency of the sequential run")
	flag.IntVar(&cfg.c, "c", 32, "concurrent clients")
	flag.IntVar(&cfg.n, "n", 3000, "requests per workload and mode")
	flag.IntVar(&cfg.seqN, "seq-n", 50, "requests per workload of the sequential run")
	flag.DurationVar(&cfg.timeout, "timeout", time.Minute, "time cap of each run")
	flag.StringVar(&cfg.tailcall, "tailcall", "", "path of a Tailcall 1.0 binary to run side by side with the facade (empty: the facade alone)")
	flag.StringVar(&cfg.tailcallConfig, "tailcall-config", "bench/tailcall/sure.graphql", "Tailcall configuration to serve, its upstream and port rendered by loadbench")
	flag.StringVar(&cfg.ours, "ours", oursProcess, "how the facade runs: "+oursProcess+" (the server binary, built from this module, in a process of its own, as Tailcall runs) or "+oursInProcess+" (facade.New in this process; -cpuprofile then covers it)")
	flag.BoolVar(&cfg.floor, "floor", false, "also measure the net/http floor: a Go server answering each request with the facade's answer, doing nothing else (its CPU per answer is what net/http costs alone)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of this process (the load generator and the fake, and the facade with -ours "+oursInProcess+") to this file")
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

// target is one GraphQL server under test.
type target struct {
	name string
	url  string
	op   func(workload) operation // its way of asking a workload
	// proc is its process, whose CPU time each run reports; nil when it
	// serves from this process (-ours in-process).
	proc *serverProcess
	// prepare, when set, runs before each run of the target with the
	// operation it will be sent.
	prepare func(operation) error
}

// floorName names the net/http floor among the targets.
const floorName = "net/http floor"

// mode is one way of running every workload.
type mode struct {
	name    string
	latency time.Duration // the fake's, during the run
	c, n    int
	keyOf   func(worker, i int) string // the API key of a worker's i-th request
}

func run(w io.Writer, cfg config) error {
	ctx := context.Background()
	fake, manyKeys := newFake(cfg.c)
	upURL, stopUp, err := restclienttest.ServeLoopback(ctx, fake)
	if err != nil {
		return err
	}
	defer stopUp()
	targets, tcVersion, stopTargets, err := startTargets(ctx, cfg, upURL)
	if err != nil {
		return err
	}
	defer stopTargets()

	// The load generator keeps a connection per worker and target open, so
	// that the figures do not include connection setup.
	lt := http.DefaultTransport.(*http.Transport).Clone()
	lt.MaxIdleConns, lt.MaxIdleConnsPerHost = cfg.c*len(targets), cfg.c
	defer lt.CloseIdleConnections()
	hc := &http.Client{Timeout: time.Minute, Transport: lt}
	withFloorAnswers(targets, hc)

	wls, err := workloads(fake, hc, targets[0].url)
	if err != nil {
		return err
	}
	modes := []mode{
		{name: "1 key", latency: cfg.latency, c: cfg.c, n: cfg.n,
			keyOf: func(int, int) string { return restclienttest.DemoKey }},
		{name: fmt.Sprintf("%d keys", len(manyKeys)), latency: cfg.latency, c: cfg.c, n: cfg.n,
			keyOf: func(worker, i int) string { return manyKeys[worker+cfg.c*(i%2)] }},
		{name: "sequential", latency: cfg.seqLatency, c: 1, n: cfg.seqN,
			keyOf: func(int, int) string { return restclienttest.DemoKey }},
	}
	// A burst first, not reported: it opens the connections of both pools
	// and grows the heaps, which would otherwise be charged to W1.
	if err := warmUp(fake, hc, targets, wls[0], modes[:2], cfg.timeout); err != nil {
		return err
	}
	results, err := measureAll(fake, hc, targets, wls, modes, cfg.timeout)
	if err != nil {
		return err
	}

	fmt.Fprintf(w, "c=%d, n=%d per workload and mode, upstream latency %s; sequential: 1 client, %d requests, latency %s\n",
		cfg.c, cfg.n, cfg.latency, cfg.seqN, cfg.seqLatency)
	cols := columnsOf(targets)
	if cols.tailcall < 0 {
		fmt.Fprintln(w)
		printOurs(w, wls, results, len(manyKeys), cols)
	} else {
		fmt.Fprintf(w, "Tailcall: %s, %s\n", tcVersion, cfg.tailcallConfig)
		printSideBySide(w, wls, modes, results, cols)
	}
	return failures(results)
}

// newFake returns the fake Sure upstream with the demo key and, for c
// workers, two keys each, used in turn (64 keys at -c 32), none of them
// rate-limited: the runs send far more than an hour's budget of a real key.
func newFake(c int) (fake *restclienttest.Server, manyKeys []string) {
	fake = restclienttest.New()
	manyKeys = make([]string, 2*c)
	for i := range manyKeys {
		manyKeys[i] = fmt.Sprintf("loadbench-key-%d", i)
		fake.AddKey(manyKeys[i], restclienttest.DemoKey)
	}
	for _, k := range append([]string{restclienttest.DemoKey}, manyKeys...) {
		fake.SetRateLimit(k, 1<<30)
	}
	return fake, manyKeys
}

// warmUp runs a short burst of wl on every target in each of modes, at
// the fake's latency of the first, and reports nothing but a failure to
// run.
func warmUp(fake *restclienttest.Server, hc *http.Client, targets []target, wl workload, modes []mode, timeout time.Duration) error {
	fake.SetDelay(modes[0].latency)
	for _, t := range targets {
		for _, m := range modes {
			if _, err := run1(fake, hc, t, wl, m.c, 10*m.c, timeout, m.keyOf); err != nil {
				return err
			}
		}
	}
	return nil
}

// measureAll runs every workload in every mode on every target, and
// returns results[workload][mode][target]. The targets take turns within
// each mode of each workload, so that all see the same machine state.
func measureAll(fake *restclienttest.Server, hc *http.Client, targets []target, wls []workload, modes []mode, timeout time.Duration) ([][][]result, error) {
	results := make([][][]result, len(wls))
	for wi, wl := range wls {
		results[wi] = make([][]result, len(modes))
		for mi, m := range modes {
			fake.SetDelay(m.latency)
			for _, t := range targets {
				r, err := run1(fake, hc, t, wl, m.c, m.n, timeout, m.keyOf)
				if err != nil {
					return nil, err
				}
				results[wi][mi] = append(results[wi][mi], r)
			}
		}
	}
	return results, nil
}

// failures reports the answers of results that failed, with the first
// failure in the order of the runs; nil when none did.
func failures(results [][][]result) error {
	errs := 0
	var firstErr error
	for _, byMode := range results {
		for _, byTarget := range byMode {
			for _, r := range byTarget {
				errs += r.errs
				if firstErr == nil {
					firstErr = r.firstErr
				}
			}
		}
	}
	if errs > 0 {
		return fmt.Errorf("%d answers failed; first: %w", errs, firstErr)
	}
	return nil
}

// withFloorAnswers has the floor, when it is among targets, answer with
// the facade's (targets[0]) answers.
func withFloorAnswers(targets []target, hc *http.Client) {
	for i, t := range targets {
		if t.name == floorName {
			targets[i].prepare = floorAnswers(hc, targets[0].url, t.url, restclienttest.DemoKey)
		}
	}
}

// run1 measures one run of workload wl on t, after t's preparation.
func run1(fake *restclienttest.Server, hc *http.Client, t target, wl workload, c, n int,
	timeout time.Duration, keyOf func(worker, i int) string,
) (result, error) {
	if t.prepare != nil {
		if err := t.prepare(t.op(wl)); err != nil {
			return result{}, err
		}
	}
	return measure(fake, hc, t, t.name+" "+wl.name, t.op(wl), c, n, timeout, keyOf), nil
}

// startTargets starts the servers under test over the fake at upURL: the
// facade, and Tailcall when cfg names its binary (then also returned: its
// version). stop stops them, reporting failures on standard error.
func startTargets(ctx context.Context, cfg config, upURL string) (targets []target, tcVersion string, stop func(), err error) {
	var stops []func()
	stop = func() {
		for _, s := range slices.Backward(stops) {
			s()
		}
	}
	stopping := func(name string, f func() error) func() {
		return func() {
			if err := f(); err != nil {
				fmt.Fprintf(os.Stderr, "loadbench: stopping %s: %v\n", name, err)
			}
		}
	}
	gqlURL, proc, stopOurs, err := startOurs(ctx, cfg.ours, upURL)
	if err != nil {
		return nil, "", nil, err
	}
	stops = append(stops, stopping("the facade", stopOurs))
	targets = []target{{name: "ours", url: gqlURL, proc: proc, op: func(wl workload) operation { return wl.ours }}}
	if cfg.floor {
		fl, err := startFloor(ctx)
		if err != nil {
			stop()
			return nil, "", nil, err
		}
		stops = append(stops, stopping(floorName, fl.stop))
		targets = append(targets, target{name: floorName, url: fl.url, proc: fl, op: func(wl workload) operation { return wl.ours }})
	}
	if cfg.tailcall == "" {
		return targets, "", stop, nil
	}
	if tcVersion, err = tailcallVersion(ctx, cfg.tailcall); err != nil {
		stop()
		return nil, "", nil, err
	}
	tc, err := startTailcall(ctx, cfg.tailcall, cfg.tailcallConfig, upURL)
	if err != nil {
		stop()
		return nil, "", nil, err
	}
	stops = append(stops, stopping("tailcall", tc.stop))
	targets = append(targets, target{name: "Tailcall", url: tc.url, proc: tc, op: func(wl workload) operation { return wl.tailcall }})
	return targets, tcVersion, stop, nil
}

// columns says where each target's results are: the facade's first, then
// the others' (-1: not run).
type columns struct{ tailcall, floor int }

func columnsOf(targets []target) columns {
	cols := columns{tailcall: -1, floor: -1}
	for i, t := range targets {
		switch t.name {
		case "Tailcall":
			cols.tailcall = i
		case floorName:
			cols.floor = i
		}
	}
	return cols
}

// printOurs prints the facade's figures alone, one row per workload, with
// the floor's req/s and CPU per answer when it ran.
func printOurs(w io.Writer, wls []workload, results [][][]result, manyKeys int, cols columns) {
	floorHead, floorRule := "", ""
	if cols.floor >= 0 {
		floorHead, floorRule = " net/http floor, 1 key / 64 keys: req/s | CPU µs/op |", "---:|---:|"
	}
	fmt.Fprintf(w, "| workload | 1 key: calls/op | req/s | p50 ms | p99 ms | CPU µs/op | %d keys: calls/op | req/s | p50 ms | p99 ms | CPU µs/op | sequential p50 ms |%s\n", manyKeys, floorHead)
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"+floorRule)
	for wi, wl := range wls {
		one, many, seq := results[wi][0][0], results[wi][1][0], results[wi][2][0]
		floor := ""
		if cols.floor >= 0 {
			f1, f64 := results[wi][0][cols.floor], results[wi][1][cols.floor]
			floor = fmt.Sprintf(" %.0f / %.0f | %s / %s |", f1.rps, f64.rps, us(f1.cpuPerOp), us(f64.cpuPerOp))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s%s |%s\n", wl.name, cells(one), cells(many), ms(seq.p50), capped(seq), floor)
	}
}

// printSideBySide prints a table per mode, the facade's figures and
// Tailcall's in each cell, with their ratio where it says who is faster.
func printSideBySide(w io.Writer, wls []workload, modes []mode, results [][][]result, cols columns) {
	for mi, m := range modes {
		fmt.Fprintf(w, "\n%s: %d client(s), upstream latency %s, %d requests each; (ratio) = ours / Tailcall\n\n", m.name, m.c, m.latency, m.n)
		if m.c == 1 {
			fmt.Fprintln(w, "| workload | calls ours / Tailcall | p50 ms ours / Tailcall |")
			fmt.Fprintln(w, "|---|---:|---:|")
		} else {
			floorHead, floorRule := "", ""
			if cols.floor >= 0 {
				floorHead, floorRule = " net/http floor: req/s, CPU µs/op |", "---:|"
			}
			fmt.Fprintln(w, "| workload | calls ours / Tailcall | req/s ours / Tailcall | p50 ms ours / Tailcall | p99 ms ours / Tailcall | CPU µs/op ours / Tailcall |"+floorHead)
			fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|"+floorRule)
		}
		for wi, wl := range wls {
			ours, tc := results[wi][mi][0], results[wi][mi][cols.tailcall]
			calls := fmt.Sprintf("%.2f / %.2f", ours.callsPerOp, tc.callsPerOp)
			p50 := pair(ms(ours.p50), ms(tc.p50), ours.p50.Seconds()/tc.p50.Seconds())
			if m.c == 1 {
				fmt.Fprintf(w, "| %s | %s | %s%s |\n", wl.name, calls, p50, cappedPair(ours, tc))
				continue
			}
			rps := pair(fmt.Sprintf("%.0f", ours.rps), fmt.Sprintf("%.0f", tc.rps), ours.rps/tc.rps)
			p99 := pair(ms(ours.p99), ms(tc.p99), ours.p99.Seconds()/tc.p99.Seconds())
			cpu := pair(us(ours.cpuPerOp), us(tc.cpuPerOp), ours.cpuPerOp.Seconds()/tc.cpuPerOp.Seconds())
			floor := ""
			if cols.floor >= 0 {
				f := results[wi][mi][cols.floor]
				floor = fmt.Sprintf(" %.0f, %s |", f.rps, us(f.cpuPerOp))
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s%s |%s\n", wl.name, calls, rps, p50, p99, cpu, cappedPair(ours, tc), floor)
		}
	}
}

// pair renders "ours / theirs (ratio×)".
func pair(ours, theirs string, ratio float64) string {
	return fmt.Sprintf("%s / %s (%.2f×)", ours, theirs, ratio)
}

func cells(r result) string {
	return fmt.Sprintf("%.2f | %.0f | %s | %s | %s%s", r.callsPerOp, r.rps, ms(r.p50), ms(r.p99), us(r.cpuPerOp), capped(r))
}

// us renders a CPU time per answer in microseconds, "–" when unknown.
func us(d time.Duration) string {
	if d == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f", float64(d.Nanoseconds())/1000)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }

// capped marks a figure whose run the time cap ended early.
func capped(r result) string {
	if r.cappedEarly {
		return fmt.Sprintf(" (capped at %d)", r.done)
	}
	return ""
}

// cappedPair marks a side-by-side row either of whose runs the time cap
// ended early.
func cappedPair(ours, tc result) string {
	out := ""
	if ours.cappedEarly {
		out += fmt.Sprintf(" (ours capped at %d)", ours.done)
	}
	if tc.cappedEarly {
		out += fmt.Sprintf(" (Tailcall capped at %d)", tc.done)
	}
	return out
}

// measure sends n requests of op from c workers, each waiting for its
// answer before sending the next, and stops early at the time cap. Every
// answer is checked against op's checks; name labels its failures. keyOf
// names the API key of a worker's i-th request.
func measure(fake *restclienttest.Server, hc *http.Client, t target, name string, op operation, c, n int,
	timeout time.Duration, keyOf func(worker, i int) string) result {
	url := t.url
	// One request first, not measured: the server parses and caches the
	// query, and every worker's connection is then warm enough.
	_ = post(hc, url, restclienttest.DemoKey, op.query, op.vars, nil)
	fake.Reset()

	var (
		next     atomic.Int64
		mu       sync.Mutex
		lat      = make([]time.Duration, 0, n)
		errs     int
		firstErr error
		wg       sync.WaitGroup
	)
	cpu0, cpuErr := t.proc.cpuTime()
	deadline := time.Now().Add(timeout)
	start := time.Now()
	for worker := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; int(next.Add(1)) <= n && time.Now().Before(deadline); i++ {
				var data any
				t0 := time.Now()
				err := post(hc, url, keyOf(worker, i), op.query, op.vars, &data)
				d := time.Since(t0)
				if err == nil {
					err = verify(data, op.checks)
				}
				mu.Lock()
				lat = append(lat, d)
				if err != nil {
					errs++
					if firstErr == nil {
						firstErr = fmt.Errorf("%s: %w", name, err)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1, cpuErr1 := t.proc.cpuTime()

	slices.Sort(lat)
	r := result{done: len(lat), errs: errs, firstErr: firstErr, cappedEarly: len(lat) < n}
	if r.done > 0 {
		r.callsPerOp = float64(fake.Calls()) / float64(r.done)
		r.rps = float64(r.done) / elapsed.Seconds()
		r.p50 = lat[r.done*50/100]
		r.p99 = lat[min(r.done*99/100, r.done-1)]
		if cpuErr == nil && cpuErr1 == nil {
			r.cpuPerOp = (cpu1 - cpu0) / time.Duration(r.done)
		}
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
