package restclient

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"
)

// breakerRig drives a Breaker on a clock the test moves, with outcomes the
// test makes up: no network, no sleep.
type breakerRig struct {
	t   *testing.T
	b   *Breaker
	now time.Time
	ctx context.Context
	// accepted plays the record of accepted keys the client gives the
	// breaker (restcache.AcceptedKeys in the facade).
	accepted map[string]bool
}

func newBreakerRig(t *testing.T, opts BreakerOptions) *breakerRig {
	r := &breakerRig{t: t, now: time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC), ctx: t.Context(), accepted: map[string]bool{}}
	opts.Now = func() time.Time { return r.now }
	opts.Log = slog.New(slog.DiscardHandler)
	r.b = NewBreaker(opts)
	return r
}

// allow asks the breaker to let a call of key id through, as the client
// does.
func (r *breakerRig) allow(id, method string) (breakerTicket, bool) {
	return r.b.allow(r.ctx, id, method, r.accepted[id])
}

// done ends a call with status as the client does: the record of accepted
// keys learns the answer (the planner's observer, told first), then the
// breaker hears the outcome.
func (r *breakerRig) done(t breakerTicket, status int, canceled bool) {
	switch (Call{Status: status}).KeyVerdict() {
	case KeyAccepted:
		r.accepted[t.id] = true
	case KeyRejected:
		delete(r.accepted, t.id)
	}
	r.b.done(r.ctx, t, status, canceled, r.accepted[t.id])
}

// call sends one GET of key id that ends at once with status; false when
// the breaker refused it.
func (r *breakerRig) call(id string, status int) bool {
	return r.callFor(id, http.MethodGet, status, 0)
}

// callFor sends one call of key id with method that takes the time given
// (by the rig's clock) and ends with status.
func (r *breakerRig) callFor(id, method string, status int, took time.Duration) bool {
	t, ok := r.allow(id, method)
	if !ok {
		return false
	}
	r.now = r.now.Add(took)
	r.done(t, status, false)
	return true
}

// start lets n GETs of key id through (or as many as the breaker lets),
// to end later with end.
func (r *breakerRig) start(id string, n int) []breakerTicket {
	var out []breakerTicket
	for range n {
		if t, ok := r.allow(id, http.MethodGet); ok {
			out = append(out, t)
		}
	}
	return out
}

// end ends the calls start let through, each with status.
func (r *breakerRig) end(calls []breakerTicket, status int) {
	for _, t := range calls {
		r.done(t, status, false)
	}
}

func (r *breakerRig) want(s BreakerState) {
	r.t.Helper()
	if got := r.b.Status().State; got != s {
		r.t.Fatalf("state %s, want %s", got, s)
	}
}

// The breaker's states, one outcome at a time: answers are no fault (a
// 500 included: one caller's input can cause it), a caller that left
// tells nothing, the breaker opens on a failure share once the window
// holds MinCalls calls, one probe at a time once the cooldown ended, and a
// failed probe opens it for another cooldown.
func TestBreaker_States(t *testing.T) {
	t.Parallel()
	r := newBreakerRig(t, BreakerOptions{MinCalls: 6, Cooldown: time.Minute})
	const key = "key-a"
	for _, st := range []int{200, 404, 422, 429, 500, 500, 500, 500, 501, 201, 403} {
		r.call(key, st)
	}
	r.want(BreakerClosed) // 11 answers
	for range 5 {
		tk, _ := r.allow(key, http.MethodGet)
		r.done(tk, 0, true) // callers that went away before an answer
	}
	r.want(BreakerClosed)
	// 11 answers and 10 failures: under half.
	for _, st := range []int{504, 0, 502, 503, 0, 0, 503, 502, 504, 0} {
		r.call(key, st)
	}
	r.want(BreakerClosed)
	r.call(key, 503) // 11 of 22: half
	r.want(BreakerOpen)
	if r.call(key, 200) {
		t.Error("a call was sent while the breaker was open")
	}

	r.now = r.now.Add(time.Minute)
	probe, ok := r.allow(key, http.MethodGet)
	if !ok || !probe.probe {
		t.Fatal("after the cooldown no probe was let through")
	}
	r.want(BreakerHalfOpen)
	if _, ok := r.allow(key, http.MethodGet); ok {
		t.Error("a second call was sent while the probe was on its way")
	}
	r.done(probe, 503, false)
	r.want(BreakerOpen)

	r.now = r.now.Add(time.Minute)
	probe, _ = r.allow(key, http.MethodGet)
	r.done(probe, 0, true) // the probe's caller left: try again
	r.want(BreakerHalfOpen)
	probe, ok = r.allow(key, http.MethodGet)
	if !ok || !probe.probe {
		t.Fatal("after a canceled probe no new probe was let through")
	}
	r.done(probe, 401, false) // an answer: the upstream is back
	r.want(BreakerClosed)
	transitions, refused := r.b.Counts()
	if transitions[BreakerOpen] != 2 || transitions[BreakerHalfOpen] != 2 || transitions[BreakerClosed] != 1 || refused != 2 {
		t.Errorf("transitions %v, refused %d; want open 2, half_open 2, closed 1, refused 2", transitions, refused)
	}
	// Closed, the window starts afresh: the outage's failures are gone.
	r.call("key-b", 200)
	for range 4 {
		r.call("key-b", 503)
	}
	r.want(BreakerClosed) // 5 calls: open once one more fails
	r.call("key-b", 503)
	r.want(BreakerOpen)
}

// A failure share over a window, not failures in a row: a fifth of the
// calls failing (runs of five included) never opens it, whatever the
// volume; failures older than the window count for nothing.
func TestBreaker_FailureShareOverAWindow(t *testing.T) {
	t.Parallel()
	r := newBreakerRig(t, BreakerOptions{})
	const key = "key-a"
	r.call(key, 200)
	for i := range 10_000 {
		st := 200
		if i%25 < 5 { // five in a row, every 25 calls
			st = 503
		}
		r.call(key, st)
		r.now = r.now.Add(10 * time.Millisecond)
	}
	r.want(BreakerClosed)
	// Fewer than MinCalls failures in the window: closed.
	r.now = r.now.Add(time.Minute)
	for range DefaultBreakerMinCalls - 1 {
		r.call(key, 0)
	}
	r.want(BreakerClosed)
	// Once the window moved past them, as many again still do not.
	r.now = r.now.Add(DefaultBreakerWindow)
	for range DefaultBreakerMinCalls - 1 {
		r.call(key, 0)
	}
	r.want(BreakerClosed)
	r.call(key, 0)
	r.want(BreakerOpen)
}

// Issue 25, row 5: only the calls of keys the upstream accepted count.
// Strangers (keys answered 401, keys never answered, callers without an
// id) fail as much as they like in a partial outage: the breaker stays
// closed for the key that asks meanwhile. Their answers do not close an
// open breaker, and they never take the probe.
func TestBreaker_StrangersNeitherOpenNorClose(t *testing.T) {
	t.Parallel()
	r := newBreakerRig(t, BreakerOptions{})
	const key = "key-a"
	rng := rand.New(rand.NewPCG(25, 5))
	status := func(answer int) int { // a proxy failing a fifth of the calls
		if rng.Float64() < 0.2 {
			return 503
		}
		return answer
	}
	r.call(key, 200)
	served, asked, stranger := 0, 0, 0
	for range 2_000 { // 200 s at 100 ms
		for range 20 {
			stranger++
			id := fmt.Sprintf("stranger-%d", stranger)
			for range 3 { // a GET and its two retries
				if st := status(401); !r.call(id, st) || st != 503 {
					break
				}
			}
			r.call("", status(200)) // a client without an id
		}
		asked++
		for range 3 {
			if !r.call(key, 200) {
				break
			}
			if st := status(200); st != 503 {
				served++
				break
			}
		}
		r.now = r.now.Add(100 * time.Millisecond)
	}
	if transitions, _ := r.b.Counts(); transitions[BreakerOpen] != 0 {
		t.Errorf("strangers in a 20 %% outage opened the breaker %d times", transitions[BreakerOpen])
	}
	if served*100 < asked*98 {
		t.Errorf("the key got %d of %d answers, want 98 %% (its own retries fail 0.8 %%)", served, asked)
	}
	if n := r.b.keys.Len(); n != 1 {
		t.Errorf("the breaker remembers %d keys, want the 1 accepted", n)
	}

	// Open it (the key's calls all fail), then strangers come first.
	r.now = r.now.Add(DefaultBreakerWindow)
	for range DefaultBreakerMinCalls {
		r.call(key, 0)
	}
	r.want(BreakerOpen)
	r.now = r.now.Add(DefaultBreakerCooldown)
	for i := range 10 {
		if r.call(fmt.Sprintf("stranger-x%d", i), 401) || r.call("", 200) {
			t.Fatal("a stranger's call was sent while the breaker was half-open")
		}
	}
	r.want(BreakerHalfOpen)
	if !r.call(key, 200) {
		t.Fatal("the accepted key could not probe")
	}
	r.want(BreakerClosed)
}

// Issue 25, row 3: one tenant whose calls time out (10 s each, many at
// once, a tight loop) cannot open the breaker while another key is around;
// alone, it can (a deployment of one user); and it never takes the probe,
// which another key does.
func TestBreaker_OneKeyCannotOpenItAlone(t *testing.T) {
	t.Parallel()
	r := newBreakerRig(t, BreakerOptions{})
	const tenant, other = "key-slow", "key-quick"
	r.call(tenant, 200)
	r.call(other, 200)
	// For two minutes: every 10 s, 20 of the tenant's calls time out at
	// once; the other key asks once at the start of each (its last call
	// is up to 10 s old, older than the window at times).
	refused := 0
	for range 12 {
		inFlight := r.start(tenant, 20)
		if !r.call(other, 200) {
			refused++
		}
		r.now = r.now.Add(10 * time.Second)
		r.end(inFlight, 0)
	}
	r.want(BreakerClosed)
	if refused > 0 {
		t.Errorf("the other key was refused %d times", refused)
	}
	// The other key silent for over a minute: the tenant is alone, and
	// its failures are the upstream's as far as anyone can tell.
	r.now = r.now.Add(peerMemory)
	inFlight := r.start(tenant, DefaultBreakerMinCalls)
	r.now = r.now.Add(10 * time.Second)
	r.end(inFlight, 0)
	r.want(BreakerOpen)
	// After the cooldown the tenant's tight loop comes first: it is slow,
	// so never the probe; the other key's first call is, and closes it.
	r.now = r.now.Add(DefaultBreakerCooldown)
	for range 100 {
		if r.call(tenant, 0) {
			t.Fatal("the tenant whose calls time out took the probe")
		}
	}
	if !r.call(other, 200) {
		t.Fatal("the other key could not probe")
	}
	r.want(BreakerClosed)
}

// Each key weighs as one: two failing keys of five do not open it, three
// do; two failing keys alone do.
func TestBreaker_EachKeyWeighsAsOne(t *testing.T) {
	t.Parallel()
	round := func(r *breakerRig, failing, healthy int) {
		for range 10 {
			for k := range failing {
				r.call(fmt.Sprintf("failing-%d", k), 503)
			}
			for k := range healthy {
				r.call(fmt.Sprintf("healthy-%d", k), 200)
			}
		}
	}
	for _, tc := range []struct {
		failing, healthy int
		want             BreakerState
	}{{2, 3, BreakerClosed}, {3, 2, BreakerOpen}, {2, 0, BreakerOpen}, {1, 1, BreakerClosed}} {
		t.Run(fmt.Sprintf("%d of %d", tc.failing, tc.failing+tc.healthy), func(t *testing.T) {
			r := newBreakerRig(t, BreakerOptions{})
			for k := range tc.failing {
				r.call(fmt.Sprintf("failing-%d", k), 200)
			}
			for k := range tc.healthy {
				r.call(fmt.Sprintf("healthy-%d", k), 200)
			}
			r.now = r.now.Add(DefaultBreakerWindow) // their first answers out of the window
			round(r, tc.failing, tc.healthy)
			r.want(tc.want)
		})
	}
}

// The probe is a quick GET of an accepted key: not a write, not a key
// whose call was slow (answered or not) in the last slowMemory, unless no
// quick key came for a cooldown after the breaker became half-open (when
// the whole upstream hangs, every key is slow).
func TestBreaker_ProbeIsAQuickRead(t *testing.T) {
	t.Parallel()
	r := newBreakerRig(t, BreakerOptions{MinCalls: 2})
	const quick, slow = "key-quick", "key-slow"
	r.call(quick, 200)
	r.call(slow, 200)
	r.callFor(slow, http.MethodGet, 200, DefaultBreakerProbeTimeout) // answered, but slowly
	for range 3 {
		r.call(quick, 0)
		r.call(slow, 0)
	}
	r.want(BreakerOpen)
	r.now = r.now.Add(DefaultBreakerCooldown)
	if r.callFor(quick, http.MethodPost, 201, 0) {
		t.Error("a write probed")
	}
	if r.call(slow, 200) {
		t.Error("a key whose call was slow probed while a quick one may still come")
	}
	r.want(BreakerHalfOpen)
	// No quick key for a cooldown: the slow one probes; the upstream
	// hangs still, the probe runs out of its time.
	r.now = r.now.Add(DefaultBreakerCooldown - time.Millisecond)
	if r.call(slow, 200) {
		t.Error("the slow key probed before the breaker waited a cooldown for a quick one")
	}
	r.now = r.now.Add(time.Millisecond)
	if !r.callFor(slow, http.MethodGet, 0, DefaultBreakerProbeTimeout) {
		t.Fatal("no quick key came for a cooldown, and the slow key could not probe")
	}
	r.want(BreakerOpen)
	r.now = r.now.Add(DefaultBreakerCooldown)
	if r.call(slow, 200) {
		t.Error("a key whose probe was slow probed again at once")
	}
	if !r.call(quick, 200) {
		t.Error("the quick key could not probe")
	}
	r.want(BreakerClosed)
}

// A key answered 401 is forgotten with its calls; past Keys keys, the
// least recently heard is.
func TestBreaker_ForgetsKeys(t *testing.T) {
	t.Parallel()
	r := newBreakerRig(t, BreakerOptions{Keys: 2, MinCalls: 4})
	r.call("a", 200)
	r.call("a", 503)
	r.call("a", 503)
	r.call("a", 401) // revoked: its calls no longer count
	if _, ok := r.b.keys.Peek("a"); ok {
		t.Error("a key answered 401 is still accepted")
	}
	if c, _ := r.b.total.sum(r.b.tickOf(r.now)); c != 0 {
		t.Errorf("the window holds %d calls of a revoked key", c)
	}
	r.call("b", 200)
	r.call("c", 200)
	r.call("d", 200) // pushes b out
	if _, ok := r.b.keys.Peek("b"); ok || r.b.keys.Len() != 2 {
		t.Errorf("keys %v, want c and d", r.b.keys.Keys())
	}
	if c, _ := r.b.total.sum(r.b.tickOf(r.now)); c != 2 {
		t.Errorf("the window holds %d calls, want c's and d's", c)
	}
}

// A refused call is a GateError around an UnavailableError with reason
// circuit_open: not retried, not a write whose outcome is unknown.
func TestBreaker_Error(t *testing.T) {
	t.Parallel()
	err := circuitOpen("GET /categories")
	if ProbeReason(err) != ReasonCircuitOpen || Retryable(err) || OutcomeUnknown(err) {
		t.Errorf("reason %q, retryable %t, outcome unknown %t; want circuit_open, false, false", ProbeReason(err), Retryable(err), OutcomeUnknown(err))
	}
}

// roundTrip answers every request itself, noting each one's deadline.
type roundTrip struct {
	status    int
	deadlines []time.Duration // time left on each request's context; 0 for none
}

func (rt *roundTrip) RoundTrip(req *http.Request) (*http.Response, error) {
	left := time.Duration(0)
	if d, ok := req.Context().Deadline(); ok {
		left = time.Until(d)
	}
	rt.deadlines = append(rt.deadlines, left)
	return &http.Response{
		StatusCode: rt.status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: http.NoBody, Request: req,
	}, nil
}

// Through the client: the breaker knows a caller by the id For binds
// (WithAPIKey binds none: a stranger), and its probe is sent with the
// probe's timeout, other calls without.
func TestBreaker_ThroughTheClient(t *testing.T) {
	t.Parallel()
	r := newBreakerRig(t, BreakerOptions{MinCalls: 1, ProbeTimeout: time.Hour})
	rt := &roundTrip{status: http.StatusServiceUnavailable}
	base, err := New("https://sure.example.com", WithHTTPClient(&http.Client{Transport: rt}), WithRetryPolicy(RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	base = base.WithBreaker(r.b, func(id string) bool { return r.accepted[id] })
	page := ListCategoriesOptions{Page: 1, PerPage: 1}
	stranger := base.WithAPIKey("key-a")
	for range 50 {
		_, _ = stranger.ListCategories(t.Context(), page)
	}
	r.want(BreakerClosed) // no id: its failures are no one's
	if n := r.b.keys.Len(); n != 0 {
		t.Fatalf("the breaker knows %d keys, want none", n)
	}
	a := base.For(Caller{APIKey: "key-a", ID: "id-a"})
	r.call("id-a", http.StatusOK) // an answer accepted it
	_, _ = a.ListCategories(t.Context(), page)
	r.want(BreakerOpen)
	r.now = r.now.Add(DefaultBreakerCooldown)
	rt.status = http.StatusOK
	_, _ = a.ListCategories(t.Context(), page) // the probe: an empty body, but an answer
	r.want(BreakerClosed)
	_, _ = a.ListCategories(t.Context(), page)
	if len(rt.deadlines) != 53 {
		t.Fatalf("%d requests sent, want 53", len(rt.deadlines))
	}
	if probe, after := rt.deadlines[51], rt.deadlines[52]; probe <= 0 || probe > time.Hour || after != 0 {
		t.Errorf("time left: the probe %s, the call after it %s; want at most an hour, and no deadline", probe, after)
	}
}
