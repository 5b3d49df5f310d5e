package restclient

import (
	"log/slog"
	"testing"
	"time"
)

// The breaker's states, one outcome at a time on a clock the test moves:
// answers are no fault (a 500 included: one caller's input can cause it), a caller that left tells nothing, one
// probe at a time once the cooldown ended, and a failed probe opens it for
// another cooldown.
func TestBreaker_States(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	b := NewBreaker(BreakerOptions{Failures: 3, Cooldown: time.Minute, Now: func() time.Time { return now }, Log: slog.New(slog.DiscardHandler)})
	ctx := t.Context()
	call := func(status int, canceled bool) (sent bool) {
		probe, ok := b.allow(ctx)
		if ok {
			b.done(ctx, probe, status, canceled)
		}
		return ok
	}
	want := func(s BreakerState) {
		t.Helper()
		if got := b.Status().State; got != s {
			t.Fatalf("state %s, want %s", got, s)
		}
	}
	for _, st := range []int{401, 404, 422, 429, 0, 503, 200, 0, 0, 404, 0, 0, 201, 500, 500, 500, 500, 501} {
		call(st, false) // never 3 faults in a row: a 500 is Sure answering
	}
	want(BreakerClosed)
	for range 5 {
		call(0, true) // callers that went away before an answer
	}
	want(BreakerClosed)
	call(504, false)
	call(0, false)
	call(502, false)
	want(BreakerOpen)
	if call(200, false) {
		t.Error("a call was sent while the breaker was open")
	}

	now = now.Add(time.Minute)
	probe, ok := b.allow(ctx)
	if !ok || !probe {
		t.Fatal("after the cooldown no probe was let through")
	}
	want(BreakerHalfOpen)
	if _, ok := b.allow(ctx); ok {
		t.Error("a second call was sent while the probe was on its way")
	}
	b.done(ctx, probe, 503, false)
	want(BreakerOpen)

	now = now.Add(time.Minute)
	probe, _ = b.allow(ctx)
	b.done(ctx, probe, 0, true) // the probe's caller left: try again
	want(BreakerHalfOpen)
	probe, ok = b.allow(ctx)
	if !ok || !probe {
		t.Fatal("after a canceled probe no new probe was let through")
	}
	b.done(ctx, probe, 401, false) // an answer: the upstream is back
	want(BreakerClosed)
	transitions, refused := b.Counts()
	if transitions[BreakerOpen] != 2 || transitions[BreakerHalfOpen] != 2 || transitions[BreakerClosed] != 1 || refused != 2 {
		t.Errorf("transitions %v, refused %d; want open 2, half_open 2, closed 1, refused 2", transitions, refused)
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
