package restclient

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Defaults of BreakerOptions.
const (
	// DefaultBreakerWindow is how far back the breaker looks when it
	// judges the upstream: calls that ended longer ago count for nothing.
	DefaultBreakerWindow = 10 * time.Second
	// DefaultBreakerMinCalls is how many calls of accepted keys must have
	// ended within the window before their failures can open the breaker:
	// a few failed calls of a quiet moment are no outage, and a dead
	// upstream under load still reaches it within a second or two.
	DefaultBreakerMinCalls = 20
	// DefaultBreakerRatio is the share of failures, each key weighing as
	// one whatever its number of calls, that opens the breaker: half. A
	// partial outage that fails one call in five (which the retries
	// absorb) never reaches it; a dead upstream fails them all.
	DefaultBreakerRatio = 0.5
	// DefaultBreakerCooldown is how long an open breaker refuses calls
	// before it lets a probe through to find out whether the upstream is
	// back.
	DefaultBreakerCooldown = 5 * time.Second
	// DefaultBreakerProbeTimeout bounds the half-open breaker's probe (a
	// GET of a quick key): an upstream that is back answers a cheap read
	// well within it, so waiting longer only keeps every other caller
	// refused. A call that took longer marks its key slow (see
	// slowMemory). server.go gives a fifth of -upstream-timeout.
	DefaultBreakerProbeTimeout = 2 * time.Second
	// DefaultBreakerKeys bounds the accepted keys whose calls the breaker
	// counts (a few hundred bytes each); past it the least recently heard
	// is dropped with its calls, and counted afresh from its next call.
	DefaultBreakerKeys = 10_000
)

const (
	// breakerBuckets is how many slices the window is counted in: it
	// slides by a tenth of itself.
	breakerBuckets = 10
	// slowMemory is how long a key whose call was slow (it timed out, or
	// took the probe's timeout or longer to answer) is passed over for
	// the half-open breaker's probe: a tenant whose calls time out on its
	// own (a huge import's page) must not hold every caller refused while
	// its probe runs out of time, again and again. A slow key probes only
	// when no quick one came for a cooldown after the breaker became
	// half-open: when the upstream hangs for everyone, every key is slow,
	// and the breaker still probes once every two cooldowns or so.
	slowMemory = 30 * time.Second
	// peerMemory is how long a key that called is still taken to be
	// around: while another accepted key called within it, one key's
	// failures alone never open the breaker, however many (the
	// failures of that key alone are its own, not the upstream's).
	peerMemory = time.Minute
)

// ReasonCircuitOpen is the Reason of a call the breaker refused: the
// upstream failed the last calls, and nothing was sent.
const ReasonCircuitOpen = "circuit_open"

// ErrCircuitOpen is what a call refused by an open breaker wraps (in an
// *UnavailableError inside a *GateError: nothing was sent).
var ErrCircuitOpen = errors.New("the upstream failed the last calls: not asked until the breaker's cooldown ends")

// BreakerState is what a Breaker knows of the upstream.
type BreakerState string

// States of a Breaker.
const (
	// BreakerClosed: calls are sent.
	BreakerClosed BreakerState = "closed"
	// BreakerOpen: calls fail at once, none sent, until the cooldown ends.
	BreakerOpen BreakerState = "open"
	// BreakerHalfOpen: one call (a probe: a GET of an accepted key whose
	// calls were quick) is sent at a time; the others fail at once until
	// a probe's answer closes the breaker.
	BreakerHalfOpen BreakerState = "half_open"
)

// BreakerOptions configures a Breaker. Zero values mean the defaults.
type BreakerOptions struct {
	// Window is how far back calls count; 0 means DefaultBreakerWindow.
	Window time.Duration
	// MinCalls is how many calls of accepted keys must have ended within
	// the window before the breaker may open; 0 means
	// DefaultBreakerMinCalls.
	MinCalls int
	// Ratio is the failure share, weighted per key, that opens the
	// breaker, in (0, 1]; 0 means DefaultBreakerRatio.
	Ratio float64
	// Cooldown is how long the breaker stays open; 0 means
	// DefaultBreakerCooldown.
	Cooldown time.Duration
	// ProbeTimeout bounds a half-open probe, and a call that takes as long
	// keeps its key from probing for a while; 0 means
	// DefaultBreakerProbeTimeout.
	ProbeTimeout time.Duration
	// Keys bounds the accepted keys whose calls are counted; 0 means
	// DefaultBreakerKeys.
	Keys int
	// Log receives one line per change of state; nil means
	// slog.Default().
	Log *slog.Logger
	// Now is the breaker's clock; nil means time.Now.
	Now func() time.Time
}

// Breaker is a circuit breaker of one upstream, shared by every client of
// it (WithBreaker). Calls are judged by whose they are, known by the
// caller's id (Caller.ID, a keyed hash of its key), so that no caller can
// steer it for the others:
//
//   - Only keys the upstream accepted count. The breaker keeps no record
//     of its own of which keys those are: the client asks the record it
//     was given (WithBreaker; restcache.AcceptedKeys in the facade, whose
//     rule is Call.KeyVerdict), at each call and again at its end, after
//     the caller's Observer has fed the record with the call's answer (a
//     key's first accepting answer counts; a key answered 401 is dropped
//     with its calls). A stranger's calls (random keys, revoked ones, a
//     client without an id) are sent while the breaker is closed, but
//     neither open nor close it, and are refused while it is open or
//     half-open.
//   - It opens on a failure share over the last Window, not on failures
//     in a row: at least MinCalls calls of accepted keys ended in it, and
//     the mean of each key's own failure share is Ratio or more. Each key
//     weighs as one, however many calls it makes: a tenant looping on
//     calls that time out weighs as one tenant. And while another accepted
//     key called within peerMemory, at least two keys must be failing
//     (each at Ratio or more): one key's failures alone never open it,
//     unless it is the only one around (a deployment of one user).
//   - A failure is no answer (a timeout, a broken connection) or a
//     gateway's 502, 503 or 504 (isOutage). Any other answer of the
//     upstream (401, 404, 422, 429, a 500…) is no fault: the upstream is
//     there, and a 500 may be one caller's input.
//   - Open, calls fail at once with ReasonCircuitOpen, sending nothing,
//     for the Cooldown; then it is half-open: one call at a time may
//     probe, and only a GET of an accepted key none of whose calls was
//     slow within slowMemory (any accepted key's GET once none such came
//     for a cooldown), sent with ProbeTimeout. Its answer closes
//     the breaker (the window starts afresh), its failure opens it for
//     another cooldown. Calls sent before it opened tell nothing once it
//     did.
//
// It is safe for concurrent use.
type Breaker struct {
	window, bucket, cooldown, probeTimeout time.Duration
	minCalls                               int
	ratio                                  float64
	log                                    *slog.Logger
	now                                    func() time.Time

	mu          sync.Mutex
	state       BreakerState
	since       time.Time
	probing     bool // half-open: a probe is on its way
	reopenAt    time.Time
	transitions map[BreakerState]int64 // changes into each state
	refused     int64                  // calls refused while open

	// keys are what the breaker counts of the accepted keys it heard, by
	// id, least recently heard first (at most Keys).
	keys *simplelru.LRU[string, *breakerKey]
	// active are the accepted keys with calls counted in the window (some
	// may have aged out: dropped when next seen).
	active map[string]*breakerKey
	total  tally // the calls of every accepted key, in the window
	// recent are the two keys heard last (by counted calls), newest
	// first: whether another key than a failing one is around.
	recent [2]peer
	// tripped is what opened the breaker last, for its log line.
	tripped trip
}

// breakerKey is what the breaker knows of one accepted key.
type breakerKey struct {
	id    string
	tally tally
	// slowUntil: a call of the key that was slow keeps it from probing
	// until then.
	slowUntil time.Time
}

// peer is a key heard at a time.
type peer struct {
	id string
	at time.Time
}

// trip is the figures that opened the breaker.
type trip struct {
	share         float64
	calls         int
	keys, failing int
}

// tally counts calls and their failures in the buckets of a window; each
// bucket is tagged with its number (time / bucket), so a bucket of an
// older lap counts for nothing.
type tally struct {
	tick   [breakerBuckets]int64
	calls  [breakerBuckets]uint32
	faults [breakerBuckets]uint32
}

func (t *tally) add(tick int64, fault bool) {
	i := bucketOf(tick)
	if t.tick[i] != tick {
		t.tick[i], t.calls[i], t.faults[i] = tick, 0, 0
	}
	t.calls[i]++
	if fault {
		t.faults[i]++
	}
}

// sum returns the calls and failures of the window that ends with bucket
// tick.
func (t *tally) sum(tick int64) (calls, faults int) {
	for i := range breakerBuckets {
		if at := t.tick[i]; at <= tick && tick-at < breakerBuckets {
			calls += int(t.calls[i])
			faults += int(t.faults[i])
		}
	}
	return calls, faults
}

// subtract takes o's counts (a part of t's) out of t.
func (t *tally) subtract(o *tally) {
	for i := range breakerBuckets {
		if t.tick[i] == o.tick[i] {
			t.calls[i] -= min(o.calls[i], t.calls[i])
			t.faults[i] -= min(o.faults[i], t.faults[i])
		}
	}
}

func bucketOf(tick int64) int { return int(uint64(tick) % breakerBuckets) }

// NewBreaker returns a closed Breaker.
func NewBreaker(opts BreakerOptions) *Breaker {
	b := &Breaker{
		window: opts.Window, minCalls: opts.MinCalls, ratio: opts.Ratio, cooldown: opts.Cooldown,
		probeTimeout: opts.ProbeTimeout, log: opts.Log, now: opts.Now,
		state: BreakerClosed, transitions: map[BreakerState]int64{}, active: map[string]*breakerKey{},
	}
	if b.window <= 0 {
		b.window = DefaultBreakerWindow
	}
	b.bucket = max(b.window/breakerBuckets, 1)
	if b.minCalls <= 0 {
		b.minCalls = DefaultBreakerMinCalls
	}
	if b.ratio <= 0 || b.ratio > 1 {
		b.ratio = DefaultBreakerRatio
	}
	if b.cooldown <= 0 {
		b.cooldown = DefaultBreakerCooldown
	}
	if b.probeTimeout <= 0 {
		b.probeTimeout = DefaultBreakerProbeTimeout
	}
	if b.log == nil {
		b.log = slog.Default()
	}
	if b.now == nil {
		b.now = time.Now
	}
	size := opts.Keys
	if size <= 0 {
		size = DefaultBreakerKeys
	}
	keys, err := simplelru.NewLRU(size, b.forgetLocked)
	if err != nil {
		panic(err) // only for a size below 1, excluded above
	}
	b.keys = keys
	b.since = b.now()
	return b
}

// WithBreaker returns a copy of c whose calls go through b (nil: none).
// accepted tells b whether the upstream accepted the key of a caller's
// id (Caller.ID): only such callers' calls move it. It is asked at each
// call and again once the call's Observer was told its answer, so that
// an Observer that feeds the record of accepted keys (the planner does)
// has the answer count; nil accepts no key, and b then never opens. Every
// client of one breaker must give it the same record. Probe does not go
// through it: readiness and the start's check see the upstream as it is.
func (c *Client) WithBreaker(b *Breaker, accepted func(id string) bool) *Client {
	cp := *c
	cp.breaker = b
	cp.accepted = accepted
	return &cp
}

// acceptedID reports whether the record of accepted keys WithBreaker gave
// holds the caller with this id.
func (c *Client) acceptedID(id string) bool {
	return id != "" && c.accepted != nil && c.accepted(id)
}

// breakerTicket is what allow hands a call it lets through, for done.
type breakerTicket struct {
	id    string // the caller's id; "" for none
	probe bool   // the half-open breaker's probe
	start time.Time
}

// allow reports whether a call of the caller with this id (its method
// and whether its key is accepted say whether it may probe) may be sent,
// and gives it its ticket.
func (b *Breaker) allow(ctx context.Context, id, method string, accepted bool) (breakerTicket, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	t := breakerTicket{id: id, start: now}
	switch {
	case b.state == BreakerClosed:
		return t, true
	case b.state == BreakerOpen && now.Before(b.reopenAt):
		b.refused++
		return t, false
	case b.state == BreakerOpen:
		b.setLocked(ctx, BreakerHalfOpen)
	}
	if b.probing || !b.mayProbeLocked(id, method, accepted, now) {
		b.refused++
		return t, false
	}
	b.probing, t.probe = true, true
	return t, true
}

// mayProbeLocked reports whether a call may be the half-open breaker's
// probe: a GET (a write's outcome would be unknown if the probe's timeout
// cut it short) of an accepted key with no slow call of late, or of any
// accepted key once the breaker waited a cooldown for such a one.
func (b *Breaker) mayProbeLocked(id, method string, accepted bool, now time.Time) bool {
	if method != http.MethodGet || id == "" || !accepted {
		return false
	}
	k, heard := b.keys.Peek(id)
	return !heard || !now.Before(k.slowUntil) || now.Sub(b.since) >= b.cooldown
}

// done records the outcome of a call allow let through: status is the
// answer's (0: none came; -1: not sent after all); canceled says the
// caller went away before an answer, which tells nothing of the upstream;
// accepted, whether the caller's key is accepted now that its answer was
// learnt.
func (b *Breaker) done(ctx context.Context, t breakerTicket, status int, canceled, accepted bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t.probe {
		b.probing = false
	}
	if status < 0 || (canceled && status == 0) {
		return // not sent, or the caller left: try again with another
	}
	now := b.now()
	k := b.keyLocked(t.id, accepted)
	if k != nil && now.Sub(t.start) >= b.probeTimeout {
		k.slowUntil = now.Add(slowMemory)
	}
	fault := isOutage(status)
	switch {
	case t.probe && fault:
		b.reopenAt = now.Add(b.cooldown)
		b.setLocked(ctx, BreakerOpen)
		return
	case t.probe:
		b.setLocked(ctx, BreakerClosed)
		b.restartLocked()
		return
	case k == nil || b.state != BreakerClosed:
		// A stranger's call; or one sent before the breaker opened,
		// whose news the probe gives.
		return
	}
	b.countLocked(k, now, fault)
	if fault && b.tripLocked(now) {
		b.reopenAt = now.Add(b.cooldown)
		b.setLocked(ctx, BreakerOpen)
	}
}

// keyLocked returns the entry of the caller with this id, made at its
// first call, when its key is accepted; nil for a stranger. A key no
// longer accepted (answered 401, or gone from the record) is dropped with
// its calls.
func (b *Breaker) keyLocked(id string, accepted bool) *breakerKey {
	if id == "" {
		return nil
	}
	if !accepted {
		b.keys.Remove(id) // forgetLocked drops its calls
		return nil
	}
	if k, heard := b.keys.Get(id); heard {
		return k
	}
	k := &breakerKey{id: id}
	b.keys.Add(id, k)
	return k
}

// forgetLocked drops what the breaker counted of a key it forgets (no
// longer accepted, or pushed out by newer keys); b.mu is held (the LRU
// calls it).
func (b *Breaker) forgetLocked(id string, k *breakerKey) {
	if _, ok := b.active[id]; ok {
		b.total.subtract(&k.tally)
		delete(b.active, id)
	}
	for i := range b.recent {
		if b.recent[i].id == id {
			b.recent[i] = peer{}
		}
	}
}

// countLocked counts a call of accepted key k that ended at now.
func (b *Breaker) countLocked(k *breakerKey, now time.Time, fault bool) {
	tick := b.tickOf(now)
	k.tally.add(tick, fault)
	b.total.add(tick, fault)
	b.active[k.id] = k
	if b.recent[0].id == k.id {
		b.recent[0].at = now
	} else {
		b.recent[1], b.recent[0] = b.recent[0], peer{id: k.id, at: now}
	}
}

// tripLocked reports whether the window's calls open the breaker (see
// Breaker), and notes why in b.tripped. It walks the keys with calls in
// the window, once the window holds MinCalls calls and a failure came.
func (b *Breaker) tripLocked(now time.Time) bool {
	tick := b.tickOf(now)
	calls, _ := b.total.sum(tick)
	if calls < b.minCalls {
		return false
	}
	var (
		shares        float64
		keys, failing int
		failer        string
	)
	for id, k := range b.active {
		c, f := k.tally.sum(tick)
		if c == 0 {
			delete(b.active, id) // aged out of the window
			continue
		}
		share := float64(f) / float64(c)
		shares += share
		keys++
		if share >= b.ratio {
			failing++
			failer = id
		}
	}
	if keys == 0 || shares/float64(keys) < b.ratio {
		return false
	}
	if failing < 2 && b.peerBesidesLocked(failer, now) {
		return false // one key's failures are its own
	}
	b.tripped = trip{share: shares / float64(keys), calls: calls, keys: keys, failing: failing}
	return true
}

// peerBesidesLocked reports whether an accepted key other than id called
// within peerMemory. The newest such key is one of the two heard last.
func (b *Breaker) peerBesidesLocked(id string, now time.Time) bool {
	for _, p := range b.recent {
		if p.id != "" && p.id != id && now.Sub(p.at) < peerMemory {
			return true
		}
	}
	return false
}

// restartLocked starts the window afresh: the breaker closed, and what
// came before its outage says nothing of the upstream now.
func (b *Breaker) restartLocked() {
	for _, k := range b.active {
		k.tally = tally{}
	}
	clear(b.active)
	b.total = tally{}
}

func (b *Breaker) tickOf(now time.Time) int64 { return now.UnixNano() / int64(b.bucket) }

// isOutage reports whether an answer's status (0: none came) says the
// upstream is down: no answer, or a gateway's 502, 503 or 504. Any other
// answer, a 500 included, is Sure answering: a 500 can be one caller's
// input the server chokes on, and counting it would let that caller open
// the circuit for everyone.
func isOutage(status int) bool {
	switch status {
	case 0, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// setLocked changes the state and logs the change; b.mu is held.
func (b *Breaker) setLocked(ctx context.Context, s BreakerState) {
	prev, for_ := b.state, b.now().Sub(b.since)
	b.state, b.since = s, b.now()
	b.transitions[s]++
	switch s {
	case BreakerOpen:
		if prev == BreakerHalfOpen {
			// Logged once per outage, not once per cooldown: the probe
			// failing again is the same news.
			return
		}
		b.log.WarnContext(ctx, "upstream circuit open: calls fail at once with UPSTREAM_UNAVAILABLE (circuit_open) until a probe finds the upstream back",
			"failureShare", b.tripped.share, "calls", b.tripped.calls, "keys", b.tripped.keys, "failingKeys", b.tripped.failing,
			"window", b.window, "retryIn", b.cooldown)
	case BreakerHalfOpen:
		b.log.DebugContext(ctx, "upstream circuit half-open: a quick call of an accepted key probes the upstream")
	case BreakerClosed:
		b.log.InfoContext(ctx, "upstream circuit closed: the upstream answers again", "downFor", for_.Round(time.Millisecond))
	}
}

// BreakerStatus is a Breaker's state as /readyz and metrics report it.
type BreakerStatus struct {
	State BreakerState `json:"state"`
	Since time.Time    `json:"since"`
}

// Status returns the breaker's state.
func (b *Breaker) Status() BreakerStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	return BreakerStatus{State: b.state, Since: b.since.UTC()}
}

// Counts returns how many times the breaker entered each state, and how
// many calls it refused.
func (b *Breaker) Counts() (transitions map[BreakerState]int64, refused int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[BreakerState]int64, 3)
	for _, s := range []BreakerState{BreakerClosed, BreakerOpen, BreakerHalfOpen} {
		out[s] = b.transitions[s]
	}
	return out, b.refused
}

// circuitOpen is the error of a call the breaker refused.
func circuitOpen(op string) error {
	return &GateError{Err: &UnavailableError{Op: op, Err: ErrCircuitOpen}}
}
