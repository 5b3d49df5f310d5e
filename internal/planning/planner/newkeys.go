package planner

import (
	"fmt"
	"math"
	"time"
)

// NewKeyLimitError refuses a call of a key the upstream has not accepted
// yet while the calls of such keys are over their bound
// (Shared.NewKeys): strangers flooding the server with random keys. The
// caller may try again after RetryAfter; nothing was sent.
type NewKeyLimitError struct {
	RetryAfter time.Duration
}

func (e *NewKeyLimitError) Error() string {
	return fmt.Sprintf("the server is receiving many requests with API keys the Sure server has not accepted yet, and this key is not known here yet; retry in %d seconds",
		e.RetrySeconds())
}

// RetrySeconds is RetryAfter in whole seconds, at least 1.
func (e *NewKeyLimitError) RetrySeconds() int {
	return max(int(math.Ceil(e.RetryAfter.Seconds())), 1)
}

// admitNewKey lets a call of the planner's key through the bound of
// calls of keys the upstream has not accepted yet (Shared.NewKeys): a key
// in Shared.Accepted passes; another takes a call from the bound, first
// attempts only, a retry being the same call.
func (l *Planner) admitNewKey(attempt int) error {
	if attempt > 0 || l.shared.NewKeys == nil || l.shared.Accepted.Accepted(l.apiKey) {
		return nil
	}
	if wait, ok := l.shared.NewKeys.Admit(l.shared.now()); !ok {
		return &NewKeyLimitError{RetryAfter: wait}
	}
	return nil
}
