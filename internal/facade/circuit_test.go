package facade_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/observe/metrics"
	"github.com/suregql/suregql/restclient"
)

// outage stands in front of the fake upstream: while down, every request
// is answered 503 by a proxy; with hold set, a request that arrives waits
// for release (so that a test sees which requests arrive meanwhile).
type outage struct {
	down     atomic.Bool
	arrivals atomic.Int64 // requests that reached the upstream while down
	inFlight atomic.Int64
	maxIn    atomic.Int64 // most requests in flight at once while down

	mu      sync.Mutex
	arrived chan struct{} // non-nil: hold the next request
	release chan struct{}
}

func (o *outage) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !o.down.Load() {
			next.ServeHTTP(w, r)
			return
		}
		o.arrivals.Add(1)
		n := o.inFlight.Add(1)
		defer o.inFlight.Add(-1)
		for m := o.maxIn.Load(); n > m && !o.maxIn.CompareAndSwap(m, n); m = o.maxIn.Load() {
		}
		o.mu.Lock()
		arrived, release := o.arrived, o.release
		o.arrived = nil
		o.mu.Unlock()
		if arrived != nil {
			close(arrived)
			<-release
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
}

// holdNext makes the next request wait: arrived is closed when it comes,
// and it is answered once release is closed.
func (o *outage) holdNext() (arrived, release chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.arrived, o.release = make(chan struct{}), make(chan struct{})
	return o.arrived, o.release
}

// outageAnswer is what a test reads of one GraphQL answer.
type outageAnswer struct {
	code, reason string // the first error's, "" without errors
	calls        int    // extensions.upstream.calls
}

// ask sends a query of categories as the demo key (see askAs).
func ask(t *testing.T, e *env, first int) outageAnswer {
	t.Helper()
	return askTotalDuringOutage(t, e, restclienttest.DemoKey, first)
}

// The upstream goes down under load: once the breaker opens, answers are
// UPSTREAM_UNAVAILABLE with reason circuit_open at 0 calls and readiness
// stays 200; after the cooldown one probe at a time reaches the upstream;
// once it is back, the breaker closes by itself. One log line per change,
// and the metric says the state.
func TestCircuitBreaker_UpstreamOutage(t *testing.T) {
	t.Parallel()
	const failures, cooldown = 5, 10 * time.Second
	clock := &fakeClock{t: time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)}
	var logs bytes.Buffer
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &logMu}, nil))
	breaker := restclient.NewBreaker(restclient.BreakerOptions{MinCalls: failures, Cooldown: cooldown, Now: clock.now, Log: log})
	out := &outage{}
	m := metrics.New()
	e := newEnv(t, withUpstreamWrapper(out.wrap), withConfig(func(c *facade.Config) {
		c.Breaker, c.Metrics, c.Log = breaker, m, log
	}))
	readyz := func() int {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.server.URL+"/readyz", nil)
		return send(t, req).status
	}

	if a := ask(t, e, 1); a.code != "" || a.calls != 1 {
		t.Fatalf("with the upstream up: %+v, want an answer at 1 call", a)
	}

	// The upstream goes down under load: 8 clients, 40 requests.
	out.down.Store(true)
	const workers, requests = 8, 40
	answers := make([]outageAnswer, requests)
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < requests; i = int(next.Add(1)) - 1 {
				answers[i] = ask(t, e, 2+i)
			}
		})
	}
	wg.Wait()
	if st := breaker.Status().State; st != restclient.BreakerOpen {
		t.Fatalf("after %d failing requests the breaker is %s, want open", requests, st)
	}
	// The key's calls failing (at most MinCalls of them) open it; the
	// requests in flight then may add one attempt and one retry each.
	if n := out.arrivals.Load(); n > failures+2*workers {
		t.Errorf("the dead upstream got %d calls for %d requests, want at most %d", n, requests, failures+2*workers)
	}
	t.Logf("the dead upstream got %d calls for %d requests of %d clients", out.arrivals.Load(), requests, workers)
	open := 0
	for _, a := range answers {
		if a.code != "UPSTREAM_UNAVAILABLE" {
			t.Errorf("during the outage: %+v, want UPSTREAM_UNAVAILABLE", a)
		}
		if a.reason == restclient.ReasonCircuitOpen {
			open++
			// 1: its first attempt failed before the breaker opened,
			// its retry was refused.
			if a.calls > 1 {
				t.Errorf("a circuit_open answer spent %d calls, want at most its first attempt", a.calls)
			}
		}
	}
	if open < requests-failures-2*workers {
		t.Errorf("%d of %d answers circuit_open, want all but the first few", open, requests)
	}

	// While open: fail fast, 0 calls, readiness unchanged.
	before := out.arrivals.Load()
	for i := range 20 {
		if a := ask(t, e, 50+i); a.code != "UPSTREAM_UNAVAILABLE" || a.reason != restclient.ReasonCircuitOpen || a.calls != 0 {
			t.Errorf("with the breaker open: %+v, want UPSTREAM_UNAVAILABLE circuit_open at 0 calls", a)
		}
	}
	if n := out.arrivals.Load() - before; n != 0 {
		t.Errorf("with the breaker open the upstream got %d calls, want 0", n)
	}
	if got := readyz(); got != http.StatusOK {
		t.Errorf("/readyz during the outage: %d, want 200", got)
	}
	if !strings.Contains(rawMetrics(t, e), `suregql_upstream_circuit_state{state="open"} 1`) {
		t.Errorf("/metrics does not show the breaker open")
	}

	// After the cooldown, one probe at a time: while it is on its way,
	// the others still fail fast.
	clock.advance(cooldown)
	arrived, release := out.holdNext()
	before = out.arrivals.Load()
	probe := make(chan outageAnswer, 1)
	go func() { probe <- ask(t, e, 80) }()
	<-arrived
	var others sync.WaitGroup
	for i := range 10 {
		others.Go(func() {
			if a := ask(t, e, 81+i); a.reason != restclient.ReasonCircuitOpen || a.calls != 0 {
				t.Errorf("while the probe is on its way: %+v, want circuit_open at 0 calls", a)
			}
		})
	}
	others.Wait()
	if n := out.arrivals.Load() - before; n != 1 {
		t.Errorf("half-open: the upstream got %d calls, want the one probe", n)
	}
	close(release) // still down: the probe fails, the breaker opens again
	if a := <-probe; a.code != "UPSTREAM_UNAVAILABLE" {
		t.Errorf("the failed probe's request: %+v, want UPSTREAM_UNAVAILABLE", a)
	}
	if st := breaker.Status().State; st != restclient.BreakerOpen {
		t.Errorf("after a failed probe the breaker is %s, want open", st)
	}
	if n := out.maxIn.Load(); n > workers {
		t.Errorf("%d calls in flight at once while down, want at most %d", n, workers)
	}

	// The upstream is back: after the cooldown the next request probes,
	// finds it, and the breaker closes; everything answers again.
	out.down.Store(false)
	clock.advance(cooldown)
	for i := range 5 {
		if a := ask(t, e, 91+i); a.code != "" || a.calls != 1 {
			t.Errorf("with the upstream back: %+v, want an answer at 1 call", a)
		}
	}
	if st := breaker.Status().State; st != restclient.BreakerClosed {
		t.Errorf("with the upstream back the breaker is %s, want closed", st)
	}
	if !strings.Contains(rawMetrics(t, e), `suregql_upstream_circuit_state{state="closed"} 1`) {
		t.Errorf("/metrics does not show the breaker closed")
	}
	logMu.Lock()
	text := logs.String()
	logMu.Unlock()
	if n := strings.Count(text, "upstream circuit open"); n != 1 {
		t.Errorf("%d lines say the circuit opened, want 1 per outage:\n%s", n, text)
	}
	if n := strings.Count(text, "upstream circuit closed"); n != 1 {
		t.Errorf("%d lines say the circuit closed, want 1:\n%s", n, text)
	}
}

// A key the upstream refuses (401), a missing record (404): answers,
// not faults: however many, the breaker stays closed.
func TestCircuitBreaker_ClientErrorsAreNoFault(t *testing.T) {
	t.Parallel()
	breaker := restclient.NewBreaker(restclient.BreakerOptions{MinCalls: 2})
	e := newEnv(t, withConfig(func(c *facade.Config) { c.Breaker = breaker }))
	for range 5 {
		r := e.do("not-a-key", `{ categories(first: 1) { totalCount } }`, nil)
		wantError(t, r, "UNAUTHENTICATED")
		r = e.do(restclienttest.DemoKey, `{ node(id: "Q2F0ZWdvcnk6MDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAw") { id } }`, nil)
		if len(r.errs) > 0 && r.errs[0].Extensions["reason"] == restclient.ReasonCircuitOpen {
			t.Fatalf("a 404 opened the breaker: %v", r.errs)
		}
	}
	if st := breaker.Status().State; st != restclient.BreakerClosed {
		t.Errorf("after 401s and 404s the breaker is %s, want closed", st)
	}
}

// rawMetrics returns e's /metrics exposition.
func rawMetrics(t *testing.T, e *env) string {
	t.Helper()
	_, raw := scrapeMetrics(t, e.server.URL+"/metrics")
	return raw
}

// A 500 is Sure answering, maybe to one caller's input: however many one
// caller draws (three lookups Sure answers 500 to), another caller
// is never refused circuit_open.
func TestCircuitBreaker_OneCallersServerErrorsDoNotOpenIt(t *testing.T) {
	t.Parallel()
	breaker := restclient.NewBreaker(restclient.BreakerOptions{MinCalls: 2})
	e := newEnv(t, withConfig(func(c *facade.Config) { c.Breaker = breaker }))
	chats := e.upstream.Chats(restclienttest.DemoKey)
	e.upstream.FailNext("/api/v1/chats/", 20, http.StatusInternalServerError, "application/json",
		`{"error":"internal_server_error","message":"An unexpected error occurred"}`)
	r := e.do(restclienttest.DemoKey, `query($a: ID!, $b: ID!, $c: ID!) { a: chat(id: $a) { title } b: chat(id: $b) { title } c: chat(id: $c) { title } }`,
		map[string]any{"a": chats[0].ID, "b": chats[1].ID, "c": chats[2].ID})
	if len(r.errs) == 0 {
		t.Fatalf("the lookups Sure answers 500 to answered %s", r.data)
	}
	r = e.do(restclienttest.OtherFamilyKey, `{ categories(first: 1) { totalCount } }`, nil)
	if len(r.errs) > 0 {
		t.Fatalf("another caller after one caller's 500s: %v", r.errs)
	}
	if st := breaker.Status().State; st != restclient.BreakerClosed {
		t.Errorf("after 500s the breaker is %s, want closed", st)
	}
}

// A routing error (Rails' 404 for a path it has no route for, answered
// before authentication and without Sure's rate-limit reading) says
// nothing of the key: a stranger that draws one, asking an older Sure
// for its imports, stays a stranger to the breaker, and its failures in
// an outage neither open nor close it. When the breaker counted any 4xx
// but 401 as accepting the key, that stranger opened it alone.
func TestCircuitBreaker_ARoutingErrorAcceptsNoKey(t *testing.T) {
	t.Parallel()
	breaker := restclient.NewBreaker(restclient.BreakerOptions{MinCalls: 2, Log: slog.New(slog.DiscardHandler)})
	out := &outage{}
	e := newEnv(t, withUpstream(restclienttest.WithVersion(restclienttest.Legacy)), withUpstreamWrapper(out.wrap),
		withRetry(restclient.RetryPolicy{}), withConfig(func(c *facade.Config) { c.Breaker = breaker }))
	const stranger = "a-key-the-upstream-never-issued"
	wantError(t, e.do(stranger, `{ imports(first: 1) { totalCount } }`, nil), "UNSUPPORTED_BY_UPSTREAM")
	out.down.Store(true)
	for i := range 3 {
		if a := askTotalDuringOutage(t, e, stranger, 1+i); a.code != "UPSTREAM_UNAVAILABLE" || a.reason == restclient.ReasonCircuitOpen {
			t.Errorf("the stranger's read %d in the outage: %+v, want UPSTREAM_UNAVAILABLE from the upstream, not circuit_open", i, a)
		}
	}
	if st := breaker.Status().State; st != restclient.BreakerClosed {
		t.Errorf("after a stranger's routing 404 and its failures the breaker is %s, want closed", st)
	}
}
