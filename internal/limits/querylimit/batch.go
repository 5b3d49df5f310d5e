package querylimit

import (
	"context"
	"sync"

	"github.com/vektah/gqlparser/v2/gqlerror"
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
	complexity int // summed over the operations let run
	bytes      int // of data, summed over the answers let through
}

type batchKey struct{}

// WithBatch returns ctx carrying a new Batch: the operations run with it
// share one complexity limit and one response cap.
func WithBatch(ctx context.Context) context.Context {
	return context.WithValue(ctx, batchKey{}, &Batch{})
}

type streamKey struct{}

// Stream is what an answer delivered in parts (@defer over
// multipart/mixed) has sent, against the response cap, which holds for
// every byte of it: the parts, their headers and the boundaries between
// them. The transport counts each part before it writes it (Admit);
// LimitResponse, which knows the cap, tells it the cap and refuses
// before it is encoded a part whose data alone would pass what is left.
// Once a part is refused the answer is: the transport writes the refusal
// as its last part and writes nothing more.
type Stream struct {
	mu      sync.Mutex
	max     int // the cap; 0 (none) until LimitResponse saw a part
	sent    int
	refusal *gqlerror.Error // set once a part is refused
}

// WithStream returns ctx carrying a new Stream: ComplexityLimit bounds
// the deferred parts of the operation run with it, and LimitResponse its
// answer's bytes together, as one answer's.
func WithStream(ctx context.Context) context.Context {
	return context.WithValue(ctx, streamKey{}, &Stream{})
}

// StreamOf returns ctx's Stream, nil when its answer is not streamed.
func StreamOf(ctx context.Context) *Stream {
	s, _ := ctx.Value(streamKey{}).(*Stream)
	return s
}

// Admit counts a part of n bytes the transport is about to write. It
// returns nil when the part fits in the cap with what was sent before;
// otherwise the RESPONSE_TOO_LARGE error to write in its place, as the
// answer's last part (n is not counted, and every later call returns the
// same error). A nil Stream, or one whose cap is not known, admits all.
func (s *Stream) Admit(n int) *gqlerror.Error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refusal != nil {
		return s.refusal
	}
	if s.max > 0 && s.sent+n > s.max {
		s.refusal = tooLarge(streamMessage, s.sent+n, s.max)
		return s.refusal
	}
	s.sent += n
	return nil
}

const streamMessage = "the answer's parts would be %d bytes; the limit is %d for all of them: ask for fewer items or fields"

// check tells s its cap, and reports the refusal of a part whose data
// (n bytes) alone would take the answer past it, or of any part once one
// was refused.
func (s *Stream) check(n, max int) *gqlerror.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.max = max
	if s.refusal == nil && s.sent+n > max {
		s.refusal = tooLarge(streamMessage, s.sent+n, max)
	}
	return s.refusal
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
