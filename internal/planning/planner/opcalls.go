package planner

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/suregql/suregql/restclient"
)

// A batch of operations (one POST of a JSON array) shares the request's
// *Planner: its memo, its family reads and its budget. Each answer still
// reports its own extensions.upstream.calls, so each operation carries a
// counter of its own in its context; countingGate adds to it every request
// sent under that context, where the gate lets it through (as Calls counts
// them, so a call still in flight when the answer is written is counted
// too). A GET shared through the memo, the coalescer or a
// planner's batch is sent under the context of the operation that sent it
// first, and counts for that operation only.

type operationCallsKey struct{}

// operationCounts is what one operation of a batch counts of its own: its
// calls, and the oldest answer it read stale.
type operationCounts struct {
	calls atomic.Int64
	stale staleRecord
}

// WithOperationCalls returns ctx with a new counter of the upstream calls
// sent under it, read by OperationCalls, and a record of the stale answers
// read under it (OperationStale).
func WithOperationCalls(ctx context.Context) context.Context {
	return context.WithValue(ctx, operationCallsKey{}, new(operationCounts))
}

// OperationCalls returns the upstream calls (retries included) sent under
// ctx's counter (see WithOperationCalls); without a counter, those of the
// request's Planner (Budget.Calls); 0 outside a request.
func OperationCalls(ctx context.Context) int {
	if n, ok := ctx.Value(operationCallsKey{}).(*operationCounts); ok {
		return int(n.calls.Load())
	}
	if l := From(ctx); l != nil {
		return l.budget.Calls()
	}
	return 0
}

// countingGate is the gate (see gate) that also counts each request it
// lets through for the operation whose context sent it.
func (l *Planner) countingGate(ctx context.Context, method, path string, attempt int) error {
	if err := l.gate(ctx, method, path, attempt); err != nil {
		return err
	}
	if n, ok := ctx.Value(operationCallsKey{}).(*operationCounts); ok {
		n.calls.Add(1)
	}
	return nil
}

// staleRecord keeps the oldest answer an operation read stale.
type staleRecord struct {
	mu     sync.Mutex
	read   bool
	oldest restclient.Staleness
}

func (r *staleRecord) note(s restclient.Staleness) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.read || s.Age > r.oldest.Age {
		r.read, r.oldest = true, s
	}
}

func (r *staleRecord) get() (restclient.Staleness, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.oldest, r.read
}

// noteStale records that the operation of ctx read an answer served stale
// (restclient.Response.Stale): in its own record within a batch, and in
// the request's.
func (l *Planner) noteStale(ctx context.Context, s restclient.Staleness) {
	l.stale.note(s)
	if n, ok := ctx.Value(operationCallsKey{}).(*operationCounts); ok {
		n.stale.note(s)
	}
}

// OperationStale returns the oldest answer the operation of ctx read
// stale (see WithOperationCalls; without its record, the request's): its
// age and why the upstream did not answer in its place. ok is false when
// every answer it read was fresh or the upstream's.
func OperationStale(ctx context.Context) (age time.Duration, reason string, ok bool) {
	var s restclient.Staleness
	if n, found := ctx.Value(operationCallsKey{}).(*operationCounts); found {
		s, ok = n.stale.get()
	} else if l := From(ctx); l != nil {
		s, ok = l.stale.get()
	}
	return s.Age, s.Reason, ok
}
