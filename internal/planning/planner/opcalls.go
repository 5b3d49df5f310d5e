package planner

import (
	"context"
	"sync/atomic"
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

// WithOperationCalls returns ctx with a new counter of the upstream calls
// sent under it, read by OperationCalls.
func WithOperationCalls(ctx context.Context) context.Context {
	return context.WithValue(ctx, operationCallsKey{}, new(atomic.Int64))
}

// OperationCalls returns the upstream calls (retries included) sent under
// ctx's counter (see WithOperationCalls); without a counter, those of the
// request's Planner (Budget.Calls); 0 outside a request.
func OperationCalls(ctx context.Context) int {
	if n, ok := ctx.Value(operationCallsKey{}).(*atomic.Int64); ok {
		return int(n.Load())
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
	if n, ok := ctx.Value(operationCallsKey{}).(*atomic.Int64); ok {
		n.Add(1)
	}
	return nil
}
