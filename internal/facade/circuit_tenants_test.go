package facade_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/restclient"
)

// askAs sends a query of categories as key, of a page size of its own (so
// that no two requests share a GET in flight), and reads the answer.
func askTotalDuringOutage(t *testing.T, e *env, key string, first int) outageAnswer {
	t.Helper()
	q := fmt.Sprintf(`{ categories(first: %d) { totalCount } }`, first)
	_, ext, err := e.client(key).ExecRawWithExtensions(context.Background(), q, nil)
	var a outageAnswer
	if err != nil {
		var body struct {
			Errors []struct {
				Extensions map[string]any `json:"extensions"`
			} `json:"errors"`
		}
		raw, _ := json.Marshal(map[string]any{"errors": err})
		if json.Unmarshal(raw, &body) != nil || len(body.Errors) == 0 {
			t.Errorf("transport error: %v", err)
			return outageAnswer{code: "TRANSPORT"}
		}
		a.code, _ = body.Errors[0].Extensions["code"].(string)
		a.reason, _ = body.Errors[0].Extensions["reason"].(string)
	}
	var x extensions
	if len(ext) > 0 {
		if err := json.Unmarshal(ext, &x); err != nil {
			t.Error(err)
		}
	}
	a.calls = x.Upstream.Calls
	return a
}

// slowTenant stands in front of the fake upstream: every request of one
// key (the tenant whose calls time out, e.g. the page of a 10 MB import)
// is held until the test releases its round, then answered 504 as the
// gateway that gave up on it does; every other request passes.
type slowTenant struct {
	key      string
	accounts chan struct{} // one token per held request, as it arrives

	mu      sync.Mutex
	release chan struct{} // closed at the end of the round
}

func (s *slowTenant) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != s.key {
			next.ServeHTTP(w, r)
			return
		}
		s.mu.Lock()
		release := s.release
		s.mu.Unlock()
		if release == nil { // not held: the tenant's first, quick read
			next.ServeHTTP(w, r)
			return
		}
		s.accounts <- struct{}{}
		<-release
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusGatewayTimeout)
	})
}

// nextRound releases the held requests and holds the next ones.
func (s *slowTenant) nextRound() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.release != nil {
		close(s.release)
	}
	s.release = make(chan struct{})
}

// Issue 25, row 3: a tenant whose calls time out (each takes the whole
// upstream timeout, 10 s here by the breaker's clock) loops on them; another
// key asks meanwhile. The tenant's timeouts are its own: they must not open
// the breaker every caller shares, nor may the tenant take the half-open
// probe. Lock-step rounds on a clock the test moves: in each round of 10 s
// the tenant starts 6 calls at once, then one more before each of the other
// key's 5 questions (its tight loop), and all its calls fail at the round's
// end. Every request's way past the breaker (held upstream, or refused) is
// settled before the next starts, so the run is the same each time.
func TestCircuitBreaker_ATenantsTimeoutsDoNotShutOthersOut(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)}
	breaker := restclient.NewBreaker(restclient.BreakerOptions{Now: clock.now, Log: slog.New(slog.DiscardHandler)})
	tenant := &slowTenant{key: restclienttest.OtherFamilyKey, accounts: make(chan struct{}, 64)}
	// No retries: each of the tenant's requests is one held call.
	e := newEnv(t, withUpstreamWrapper(tenant.wrap), withRetry(restclient.RetryPolicy{}),
		withConfig(func(c *facade.Config) { c.Breaker = breaker }))
	victim := restclienttest.DemoKey
	// Both keys are known to the upstream: each read once, quickly.
	for _, key := range []string{victim, tenant.key} {
		if a := askTotalDuringOutage(t, e, key, 1); a.code != "" {
			t.Fatalf("%s's first read: %+v", key, a)
		}
	}

	const rounds, burst, asks = 6, 6, 5
	var (
		tenantN  atomic.Int64 // the tenant's requests, for page sizes of their own
		attacks  sync.WaitGroup
		answered = make(chan struct{}, 64) // one token per tenant request refused before the upstream
	)
	attack := func() {
		first := 2 + int(tenantN.Add(1)%90)
		attacks.Go(func() {
			if a := askTotalDuringOutage(t, e, tenant.key, first); a.calls == 0 {
				answered <- struct{}{}
			}
		})
		// Settled: held upstream or answered without a call.
		select {
		case <-tenant.accounts:
		case <-answered:
		}
	}
	served, refused := 0, 0
	for r := range rounds {
		tenant.nextRound()
		attacks.Wait()
		for range burst {
			attack()
		}
		for i := range asks {
			attack()
			switch a := askTotalDuringOutage(t, e, victim, 10+r*asks+i); {
			case a.code == "":
				served++
			case a.reason == restclient.ReasonCircuitOpen:
				refused++
			default:
				t.Errorf("the other key's answer: %+v, want data or circuit_open", a)
			}
			clock.advance(2 * time.Second)
		}
	}
	tenant.nextRound() // release the last round
	attacks.Wait()
	transitions, _ := breaker.Counts()
	ratio := float64(served) / float64(rounds*asks)
	t.Logf("the other key: %d of %d answered (%.0f %%), %d refused circuit_open; the breaker opened %d times",
		served, rounds*asks, 100*ratio, refused, transitions[restclient.BreakerOpen])
	if ratio < 0.9 {
		t.Errorf("while a tenant's calls time out, another key got %d of %d answers (%.0f %%), want at least 90 %%",
			served, rounds*asks, 100*ratio)
	}
}

// flakyProxy answers a seeded fifth of the requests that reach it 503, as a
// proxy in front of a Sure with a sick replica does, whatever the key.
type flakyProxy struct {
	on   atomic.Bool
	mu   sync.Mutex
	rng  *rand.Rand
	rate float64
}

func (p *flakyProxy) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.on.Load() {
			p.mu.Lock()
			fail := p.rng.Float64() < p.rate
			p.mu.Unlock()
			if fail {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Issue 25, row 5: during a partial outage (a fifth of the answers 503),
// strangers with random keys ask as fast as they can; another key asks
// between them. Strangers' calls are not the upstream's health: they must
// not open the breaker. Sequential, on a clock the test moves (100 ms a
// round), with the proxy's failures drawn from a seeded sequence in arrival
// order: the same run each time.
func TestCircuitBreaker_StrangersDuringAPartialOutage(t *testing.T) {
	// Not parallel: thousands of requests, which would slow the tests
	// that run beside it past their Redis timeouts.
	clock := &fakeClock{t: time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)}
	breaker := restclient.NewBreaker(restclient.BreakerOptions{Now: clock.now, Log: slog.New(slog.DiscardHandler)})
	proxy := &flakyProxy{rng: rand.New(rand.NewPCG(25, 5)), rate: 0.2}
	// Production's two retries, without their wait.
	e := newEnv(t, withUpstreamWrapper(proxy.wrap), withRetry(restclient.RetryPolicy{MaxRetries: 2}),
		withConfig(func(c *facade.Config) { c.Breaker = breaker }))
	victim := restclienttest.DemoKey
	if a := askTotalDuringOutage(t, e, victim, 1); a.code != "" {
		t.Fatalf("the key's first read: %+v", a)
	}
	proxy.on.Store(true)

	rounds, strangers := 300, 20
	if raceEnabled {
		rounds = 120
	}
	served, refused, stranger := 0, 0, 0
	for r := range rounds {
		for range strangers {
			stranger++
			if a := askTotalDuringOutage(t, e, fmt.Sprintf("stranger-%d", stranger), 1); a.code == "" {
				t.Fatalf("a stranger's key was answered: %+v", a)
			}
		}
		switch a := askTotalDuringOutage(t, e, victim, 2+r%90); {
		case a.code == "":
			served++
		case a.reason == restclient.ReasonCircuitOpen:
			refused++
		}
		clock.advance(100 * time.Millisecond)
	}
	transitions, _ := breaker.Counts()
	ratio := float64(served) / float64(rounds)
	t.Logf("the other key: %d of %d answered (%.0f %%), %d refused circuit_open; %d strangers' requests; the breaker opened %d times",
		served, rounds, 100*ratio, refused, stranger, transitions[restclient.BreakerOpen])
	if ratio < 0.9 {
		t.Errorf("with strangers flooding a 20 %% outage, another key got %d of %d answers (%.0f %%), want at least 90 %%",
			served, rounds, 100*ratio)
	}
}
