package planner

import (
	"context"
	"fmt"
	"net/http"

	"github.com/suregql/suregql/restclient"
)

// The budget of an operation bounds the upstream calls its plan may make,
// before they are made. Its rules, all here:
//
//   - the budget is a quarter of the key's hourly limit (25 calls of a
//     standard key of 100), learnt from the first answer, and never more
//     than Shared.MaxCalls (Budget); a server without a limit (self-hosted,
//     "Infinity" headers) leaves Shared.MaxCalls alone;
//   - before execution, the facade refuses an operation whose root fields
//     alone need more (graph.RootCost against Budget): QUERY_TOO_EXPENSIVE
//     at no call;
//   - a strategy that sends a batch of calls reserves them first (Reserve),
//     so a batch is sent whole or not at all, even beside other fields
//     spending the same budget at the same moment: calls outside the
//     reservation cannot take what it holds, and calls within it may use
//     what it holds. A strategy that only weighs whether to try a
//     look-ahead asks Affordable, and a cheaper strategy is tried when it
//     does not fit;
//   - every first attempt passes the gate, the hard cap behind Affordable;
//     retries are counted in extensions.upstream.calls but spend nothing:
//     an upstream fault must not turn into QUERY_TOO_EXPENSIVE;
//   - a key the upstream reported out of quota is refused at the gate
//     (RATE_LIMITED, no call) until its window resets.

// TooExpensiveError refuses upstream calls that would take the operation
// past its budget. Nothing of the refused batch was sent.
type TooExpensiveError struct {
	Budget   int // calls allowed per operation
	Spent    int // calls already made
	Reserved int // calls held for other fields' batches, not made yet
	Planned  int // calls the refused batch needed
}

func (e *TooExpensiveError) Error() string {
	if e.Reserved > 0 {
		return fmt.Sprintf("this field needs %d more upstream calls, but the operation has spent %d of its budget of %d and holds %d for other fields",
			e.Planned, e.Spent, e.Budget, e.Reserved)
	}
	return fmt.Sprintf("this field needs %d more upstream calls, but the operation has spent %d of its budget of %d",
		e.Planned, e.Spent, e.Budget)
}

// limitShare is the part of a key's hourly limit one operation may spend:
// a quarter, so that one request never takes most of a standard key's hour
// (25 of its 100 calls) and a caller can always afford a few more.
const limitShare = 4

// standardLimit is the hourly limit assumed for a key whose limit no
// answer has told yet, of a server not known to limit nothing: Sure's
// standard tier.
const standardLimit = 100

// Budget returns the upstream calls the operation's plan may spend: a
// quarter of the key's hourly limit (as last reported, or the standard
// tier's until an answer tells it), and never more than MaxCalls. 0 means
// no cap.
func (l *Planner) Budget() int {
	ceiling := l.shared.MaxCalls
	if ceiling <= 0 {
		return 0
	}
	limit := standardLimit
	switch rl := l.RateLimit(); {
	case rl != nil && rl.Unlimited, rl == nil && l.serverUnlimited():
		// A self-hosted server limits nothing (a key it has not answered
		// yet either): only the facade's own cap.
		return ceiling
	case rl != nil && rl.Limit > 0:
		limit = rl.Limit
	}
	return min(ceiling, max(limit/limitShare, 1))
}

// Affordable returns a *TooExpensiveError when n more calls, sent with
// ctx, would take the operation past its budget: what other fields have
// reserved is not theirs to take, and what ctx's own reservation holds is.
func (l *Planner) Affordable(ctx context.Context, n int) error {
	if n <= 0 || l.shared.MaxCalls <= 0 {
		return nil
	}
	if l.firsts.Load()+l.reserved.Load()+int64(n) <= 1 {
		// Every capped budget allows one call: no need to learn the key's
		// limit (a round trip, when replicas share it) to know that.
		return nil
	}
	max := int64(l.Budget()) // may read the shared rate-limit store: outside the lock
	l.budgetMu.Lock()
	defer l.budgetMu.Unlock()
	return l.refusal(ctx, max, int64(n))
}

// refusal returns a *TooExpensiveError when n more calls sent with ctx do
// not fit max, or nil. l.budgetMu is held.
func (l *Planner) refusal(ctx context.Context, max, n int64) error {
	spent, others := l.firsts.Load(), l.reserved.Load()
	if own := reservationIn(ctx); own != nil {
		others -= own.left
	}
	if spent+others+n > max {
		return &TooExpensiveError{Budget: int(max), Spent: int(spent), Reserved: int(others), Planned: int(n)}
	}
	return nil
}

// reservation is budget set aside for one batch of calls (Reserve).
type reservation struct{ left int64 } // guarded by Planner.budgetMu

type reservationKey struct{}

func reservationIn(ctx context.Context) *reservation {
	r, _ := ctx.Value(reservationKey{}).(*reservation)
	return r
}

// Reserve sets n calls of the budget aside for a batch, so that the batch
// is sent whole or not at all: it fails with a *TooExpensiveError, holding
// nothing, when the calls made and reserved by others leave less than n.
// The batch's requests must be sent with the returned context, and release
// called once they have all ended: it frees what the batch did not spend.
//
// Within a reservation (ctx carries one), its own calls are available: a
// nested batch takes them over first.
func (l *Planner) Reserve(ctx context.Context, n int) (context.Context, func(), error) {
	if n <= 0 || l.shared.MaxCalls <= 0 {
		return ctx, func() {}, nil
	}
	if n == 1 {
		// One call is whole by itself: the gate sends it or refuses it.
		return ctx, func() {}, l.Affordable(ctx, 1)
	}
	max := int64(l.Budget()) // may read the shared rate-limit store: outside the lock
	l.budgetMu.Lock()
	defer l.budgetMu.Unlock()
	if err := l.refusal(ctx, max, int64(n)); err != nil {
		return ctx, func() {}, err
	}
	if outer := reservationIn(ctx); outer != nil {
		taken := min(outer.left, int64(n))
		outer.left -= taken
		l.reserved.Add(-taken)
	}
	l.reserved.Add(int64(n))
	r := &reservation{left: int64(n)}
	release := func() {
		l.budgetMu.Lock()
		defer l.budgetMu.Unlock()
		l.reserved.Add(-r.left)
		r.left = 0
	}
	return context.WithValue(ctx, reservationKey{}, r), release, nil
}

// gate lets a request through unless the key is known to be out of quota
// (the upstream would answer 429 and count nothing useful) or a first
// attempt would pass the operation's budget: the hard cap behind
// Affordable and Reserve. A first attempt sent within a reservation spends
// it, and once it is spent may still use what the budget has left: a
// batch's calls may do another field's work (a batch of lookups by id
// runs with the context of the first field that asked), and that field's
// reservation then frees what it did not spend. Any other first attempt
// may not take what reservations hold. Retries are counted as calls but do
// not spend the budget.
func (l *Planner) gate(ctx context.Context, method, path string, attempt int) error {
	// The operation's reading: the shared one, read once per operation,
	// and what its own calls answered since.
	if rl := l.RateLimit(); rl != nil {
		if wait, out := rl.Exhausted(l.shared.now()); out {
			l.refusedOutOfQuota.Store(true)
			return &restclient.RateLimitError{
				APIError:   restclient.APIError{Op: method + " " + path, StatusCode: http.StatusTooManyRequests, Code: "rate_limit_exceeded", Message: "refused locally: the key has no request left in this window"},
				RetryAfter: wait,
			}
		}
	}
	if attempt > 0 {
		l.sends.Add(1)
		return nil
	}
	max := int64(l.Budget()) // may read the shared rate-limit store: outside the lock
	l.budgetMu.Lock()
	defer l.budgetMu.Unlock()
	switch r := reservationIn(ctx); {
	case r != nil && r.left > 0:
		r.left--
		l.reserved.Add(-1)
	case max <= 0:
	case r != nil && l.firsts.Load() >= max:
		return &TooExpensiveError{Budget: int(max), Spent: int(l.firsts.Load()), Planned: 1}
	case r == nil && l.firsts.Load()+l.reserved.Load() >= max:
		return &TooExpensiveError{Budget: int(max), Spent: int(l.firsts.Load()), Reserved: int(l.reserved.Load()), Planned: 1}
	}
	l.firsts.Add(1)
	l.sends.Add(1)
	return nil
}
