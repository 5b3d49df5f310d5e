package planner

import (
	"fmt"
	"net/http"

	"suregql/restclient"
)

// The budget of an operation bounds the upstream calls its plan may make,
// before they are made. Its rules, all here:
//
//   - the budget is a quarter of the key's hourly limit (25 calls of a
//     standard key of 100), learnt from the first answer, and never more
//     than Shared.MaxCalls (Budget);
//   - before execution, the facade refuses an operation whose root fields
//     alone need more (graph.RootCost against Budget): QUERY_TOO_EXPENSIVE
//     at no call;
//   - a strategy that sends a batch of calls asks first (Affordable), so a
//     batch is sent whole or not at all, and a cheaper strategy is tried
//     when a look-ahead does not fit;
//   - every first attempt passes the gate, the hard cap behind Affordable;
//     retries are counted in extensions.upstream.calls but spend nothing:
//     an upstream fault must not turn into QUERY_TOO_EXPENSIVE;
//   - a key the upstream reported out of quota is refused at the gate
//     (RATE_LIMITED, no call) until its window resets.

// TooExpensiveError refuses upstream calls that would take the operation
// past its budget. Nothing of the refused batch was sent.
type TooExpensiveError struct {
	Budget  int // calls allowed per operation
	Spent   int // calls already made
	Planned int // calls the refused batch needed
}

func (e *TooExpensiveError) Error() string {
	return fmt.Sprintf("this field needs %d more upstream calls, but the operation has spent %d of its budget of %d",
		e.Planned, e.Spent, e.Budget)
}

// limitShare is the part of a key's hourly limit one operation may spend:
// a quarter, so that one request never takes most of a standard key's hour
// (25 of its 100 calls) and a caller can always afford a few more.
const limitShare = 4

// standardLimit is the hourly limit assumed for a key whose limit no
// answer has told yet: Sure's standard tier.
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
	if rl := l.RateLimit(); rl != nil && rl.Limit > 0 {
		limit = rl.Limit
	}
	return min(ceiling, max(limit/limitShare, 1))
}

// Affordable returns a *TooExpensiveError when n more calls would take the
// operation past its budget. Planners ask before sending a batch, so that a
// batch is sent whole or not at all.
func (l *Planner) Affordable(n int) error {
	if n <= 0 || l.shared.MaxCalls <= 0 {
		return nil
	}
	spent := int(l.firsts.Load())
	if spent+n <= 1 {
		// Every capped budget allows one call: no need to learn the key's
		// limit (a round trip, when replicas share it) to know that.
		return nil
	}
	if max := l.Budget(); spent+n > max {
		return &TooExpensiveError{Budget: max, Spent: spent, Planned: n}
	}
	return nil
}

// gate lets a request through unless the key is known to be out of quota
// (the upstream would answer 429 and count nothing useful) or a first
// attempt would pass the operation's budget: the hard cap behind
// Affordable. Retries are counted as calls but do not spend the budget.
func (l *Planner) gate(method, path string, attempt int) error {
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
	max := int64(l.Budget())
	for {
		n := l.firsts.Load()
		if max > 0 && n >= max {
			return &TooExpensiveError{Budget: int(max), Spent: int(n), Planned: 1}
		}
		if l.firsts.CompareAndSwap(n, n+1) {
			l.sends.Add(1)
			return nil
		}
	}
}
