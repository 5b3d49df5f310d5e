package planner

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// The budget of an operation bounds the upstream calls its plan may make,
// before they are made. Its rules, all here:
//
//   - the budget is a quarter of the key's hourly limit (25 calls of a
//     standard key of 100), learnt from the first answer, and never more
//     than Shared.MaxCalls (Budget.Max); a server without a limit (self-hosted,
//     "Infinity" headers) leaves Shared.MaxCalls alone;
//   - before execution, the facade refuses an operation whose root fields
//     alone need more (graph.RootCost against Budget.Affordable): QUERY_TOO_EXPENSIVE
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

// Budget is what an operation's plan may still spend upstream (see the
// rules above): what its calls spent, what its batches hold, and the cap.
// A Planner has one (Planner.Budget), shared by the operations of a
// batch.
type Budget struct {
	// max returns the cap now (0: none): it may read the shared
	// rate-limit store, so it is called outside mu.
	max    func() int
	capped bool         // a cap is set at all (Shared.MaxCalls > 0)
	sends  atomic.Int64 // requests let through: the calls made, retries included
	firsts atomic.Int64 // first attempts among them: what the budget counts
	// reserved is what reservations set aside and have not spent yet
	// (Reserve). mu orders the changes of firsts and reserved, so that
	// together they never pass the cap.
	reserved atomic.Int64
	mu       sync.Mutex
}

// Budget returns the operation's budget.
func (l *Planner) Budget() *Budget { return &l.budget }

// Max returns the calls the operation's plan may spend in all; 0 means
// no cap.
func (b *Budget) Max() int { return b.max() }

// Calls returns how many requests the operation sent upstream so far
// (retries included): every request passes the gate once.
func (b *Budget) Calls() int { return int(b.sends.Load()) }

// maxCalls is the cap of l's budget: a quarter of the key's hourly limit
// (as last reported, or the standard tier's until an answer tells it),
// and never more than MaxCalls. 0 means no cap.
func (l *Planner) maxCalls() int {
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
func (b *Budget) Affordable(ctx context.Context, n int) error {
	if n <= 0 || !b.capped {
		return nil
	}
	if b.firsts.Load()+b.reserved.Load()+int64(n) <= 1 {
		// Every capped budget allows one call: no need to learn the key's
		// limit (a round trip, when replicas share it) to know that.
		return nil
	}
	max := int64(b.max()) // may read the shared rate-limit store: outside the lock
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.refusal(ctx, max, int64(n))
}

// refusal returns a *TooExpensiveError when n more calls sent with ctx do
// not fit max, or nil. b.mu is held.
func (b *Budget) refusal(ctx context.Context, max, n int64) error {
	spent, others := b.firsts.Load(), b.reserved.Load()
	if own := reservationIn(ctx); own != nil {
		others -= own.left
	}
	if spent+others+n > max {
		return &TooExpensiveError{Budget: int(max), Spent: int(spent), Reserved: int(others), Planned: int(n)}
	}
	return nil
}

// reservation is budget set aside for one batch of calls (Reserve).
type reservation struct{ left int64 } // guarded by Budget.mu

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
func (b *Budget) Reserve(ctx context.Context, n int) (context.Context, func(), error) {
	if n <= 0 || !b.capped {
		return ctx, func() {}, nil
	}
	if n == 1 {
		// One call is whole by itself: the gate sends it or refuses it.
		return ctx, func() {}, b.Affordable(ctx, 1)
	}
	max := int64(b.max()) // may read the shared rate-limit store: outside the lock
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.refusal(ctx, max, int64(n)); err != nil {
		return ctx, func() {}, err
	}
	if outer := reservationIn(ctx); outer != nil {
		taken := min(outer.left, int64(n))
		outer.left -= taken
		b.reserved.Add(-taken)
	}
	b.reserved.Add(int64(n))
	r := &reservation{left: int64(n)}
	release := func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.reserved.Add(-r.left)
		r.left = 0
	}
	return context.WithValue(ctx, reservationKey{}, r), release, nil
}

// gate lets a request through unless the upstream answered the key 401
// moments ago (it would again), the key is known to be out of quota
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
	// A 401 answered to another call of this key since the request began
	// (an earlier operation of its batch, a request alongside).
	if l.shared.rejected(l.apiKey) {
		return ErrKeyRejected
	}
	// The operation's reading: the shared one, read once per operation,
	// and what its own calls answered since.
	if rl := l.RateLimit(); rl != nil {
		if wait, out := rl.Exhausted(l.shared.now()); out && !l.checkBeforeStale(ctx, attempt) {
			l.refusedOutOfQuota.Store(true)
			return &restclient.RateLimitError{
				APIError:   restclient.APIError{Op: method + " " + path, StatusCode: http.StatusTooManyRequests, Code: "rate_limit_exceeded", Message: "refused locally: the key has no request left in this window"},
				RetryAfter: wait,
			}
		}
	}
	if err := l.admitNewKey(attempt); err != nil {
		return err
	}
	return l.budget.admit(ctx, attempt)
}

// checkBeforeStale reports whether a read of a key known to be out of
// quota is sent all the same, to ask the upstream whether it still
// accepts the key: refused here, it would be answered from what a cache
// holds (restcache.StaleHeld), and nothing has shown the key stands for
// a while (Shared.KeyChecks). Sure answers a key it accepts 429, at no
// cost to it, and one it revoked 401, which drops what is held for it.
func (l *Planner) checkBeforeStale(ctx context.Context, attempt int) bool {
	return attempt == 0 && l.shared.KeyChecks != nil && restcache.StaleHeld(ctx) &&
		l.shared.KeyChecks.Due(l.apiKey, l.shared.now())
}

// admit lets one request through the budget: the hard cap behind
// Affordable and Reserve (see gate).
func (b *Budget) admit(ctx context.Context, attempt int) error {
	if attempt > 0 {
		b.sends.Add(1)
		return nil
	}
	max := int64(b.max()) // may read the shared rate-limit store: outside the lock
	b.mu.Lock()
	defer b.mu.Unlock()
	switch r := reservationIn(ctx); {
	case r != nil && r.left > 0:
		r.left--
		b.reserved.Add(-1)
	case max <= 0:
	case r != nil && b.firsts.Load() >= max:
		return &TooExpensiveError{Budget: int(max), Spent: int(b.firsts.Load()), Planned: 1}
	case r == nil && b.firsts.Load()+b.reserved.Load() >= max:
		return &TooExpensiveError{Budget: int(max), Spent: int(b.firsts.Load()), Reserved: int(b.reserved.Load()), Planned: 1}
	}
	b.firsts.Add(1)
	b.sends.Add(1)
	return nil
}
