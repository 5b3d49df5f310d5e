package restclient

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Defaults of BreakerOptions.
const (
	// DefaultBreakerFailures is how many failed calls in a row (no answer,
	// or a gateway's 502, 503 or 504) open the breaker: a few, so that one bad call does not, and
	// few enough that a dead upstream costs little before it opens.
	DefaultBreakerFailures = 5
	// DefaultBreakerCooldown is how long an open breaker refuses calls
	// before it lets one through to find out whether the upstream is back.
	DefaultBreakerCooldown = 5 * time.Second
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
	// BreakerHalfOpen: one call (a probe) is sent at a time; the others
	// fail at once until an answer closes the breaker.
	BreakerHalfOpen BreakerState = "half_open"
)

// BreakerOptions configures a Breaker.
type BreakerOptions struct {
	// Failures in a row open the breaker; 0 means DefaultBreakerFailures.
	Failures int
	// Cooldown is how long the breaker stays open; 0 means
	// DefaultBreakerCooldown.
	Cooldown time.Duration
	// Log receives one line per change of state; nil means
	// slog.Default().
	Log *slog.Logger
	// Now is the breaker's clock; nil means time.Now.
	Now func() time.Time
}

// Breaker is a circuit breaker of one upstream, shared by every client of
// it (WithBreaker): after Failures calls in a row got no answer or a
// gateway's 502, 503 or 504 (see isOutage),
// calls fail at once with ReasonCircuitOpen, sending nothing, for the
// cooldown; then one call at a time goes through, until one is answered
// (closed again) or fails (open for another cooldown). Any other answer of
// the upstream (401, 404, 422, 429, a 500…) is no fault: the upstream is
// there, and a 500 may be one caller's input, which must not open the
// circuit for every caller. It is safe for concurrent use.
type Breaker struct {
	failures int
	cooldown time.Duration
	log      *slog.Logger
	now      func() time.Time

	mu          sync.Mutex
	state       BreakerState
	since       time.Time
	inARow      int
	probing     bool // half-open: a call is on its way
	reopenAt    time.Time
	transitions map[BreakerState]int64 // changes into each state
	refused     int64                  // calls refused while open
}

// NewBreaker returns a closed Breaker.
func NewBreaker(opts BreakerOptions) *Breaker {
	b := &Breaker{
		failures: opts.Failures, cooldown: opts.Cooldown, log: opts.Log, now: opts.Now,
		state: BreakerClosed, transitions: map[BreakerState]int64{},
	}
	if b.failures <= 0 {
		b.failures = DefaultBreakerFailures
	}
	if b.cooldown <= 0 {
		b.cooldown = DefaultBreakerCooldown
	}
	if b.log == nil {
		b.log = slog.Default()
	}
	if b.now == nil {
		b.now = time.Now
	}
	b.since = b.now()
	return b
}

// WithBreaker returns a copy of c whose calls go through b (nil: none).
// Probe does not: readiness and the start's check see the upstream as it
// is.
func (c *Client) WithBreaker(b *Breaker) *Client {
	cp := *c
	cp.breaker = b
	return &cp
}

// allow reports whether a call may be sent, and whether it is the
// half-open breaker's probe.
func (b *Breaker) allow(ctx context.Context) (probe, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.state == BreakerClosed:
		return false, true
	case b.probing:
		b.refused++
		return false, false
	case b.state == BreakerOpen && b.now().Before(b.reopenAt):
		b.refused++
		return false, false
	}
	if b.state == BreakerOpen {
		b.setLocked(ctx, BreakerHalfOpen)
	}
	b.probing = true
	return true, true
}

// done records a call's outcome: status is the answer's (0: none came),
// err the transport's failure; canceled says the caller went away before
// an answer, which tells nothing of the upstream.
func (b *Breaker) done(ctx context.Context, probe bool, status int, canceled bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	}
	fault := isOutage(status)
	switch {
	case status < 0, canceled && status == 0: // not sent, or the caller left
		return
	case !fault:
		b.inARow = 0
		if b.state != BreakerClosed {
			b.setLocked(ctx, BreakerClosed)
		}
		return
	}
	b.inARow++
	switch {
	case b.state == BreakerHalfOpen && probe, b.state == BreakerClosed && b.inARow >= b.failures:
		b.reopenAt = b.now().Add(b.cooldown)
		b.setLocked(ctx, BreakerOpen)
	}
}

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
			"failuresInARow", b.inARow, "retryIn", b.cooldown)
	case BreakerHalfOpen:
		b.log.DebugContext(ctx, "upstream circuit half-open: one call probes the upstream")
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
