package querylimit

import (
	"context"
	"sync"
)

// Batch is what the operations of one batched request have spent of the
// limits that bound a request's work and answer: the complexity limit
// (ComplexityLimit) and the response cap (LimitResponse) hold for the
// batch as a whole, as for one operation. Per operation, a batch of ten
// would multiply both by ten: ten times the CPU and the bytes for one
// request. Each operation is checked before it runs (complexity) and once
// its answer is built (bytes) against what the earlier ones left.
type Batch struct {
	mu         sync.Mutex
	complexity int  // summed over the operations let run
	bytes      int  // of data, summed over the answers let through
	refused    bool // a part of a streamed answer was refused
}

// keep reports whether a part of a streamed answer is let through: ok,
// and no earlier part was refused (the later ones would land in data the
// client never got).
func (b *Batch) keep(ok bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refused = b.refused || !ok
	return !b.refused
}

type batchKey struct{}

// WithBatch returns ctx carrying a new Batch: the operations run with it
// share one complexity limit and one response cap.
func WithBatch(ctx context.Context) context.Context {
	return context.WithValue(ctx, batchKey{}, &Batch{})
}

type streamKey struct{}

// WithStream returns ctx carrying a new count of the data of an answer
// delivered in parts (@defer over multipart/mixed): LimitResponse bounds
// them together, as one answer's.
func WithStream(ctx context.Context) context.Context {
	return context.WithValue(ctx, streamKey{}, &Batch{})
}

func streamOf(ctx context.Context) *Batch {
	b, _ := ctx.Value(streamKey{}).(*Batch)
	return b
}

func batchOf(ctx context.Context) *Batch {
	b, _ := ctx.Value(batchKey{}).(*Batch)
	return b
}

// spend adds n to *spent when the total stays within max, and returns
// the total it would reach and whether it did.
func (b *Batch) spend(spent *int, n, max int) (total int, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	total = *spent + n
	if total > max {
		return total, false
	}
	*spent = total
	return total, true
}
