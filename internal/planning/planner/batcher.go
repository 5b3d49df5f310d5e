package planner

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/vikstrous/dataloadgen"

	"github.com/suregql/suregql/internal/planning/flight"
)

// batchWait is how long keys nobody announced wait for company before
// they are planned (see batcher). gqlgen resolves the nodes of a list
// concurrently, so such keys arrive within microseconds of each other; the
// wait is generous so that a busy machine still batches them. Announced
// keys never wait.
const batchWait = time.Millisecond

// batcher plans keys (subcategory lists, categories by id) in groups, each
// group by one call of plan, so that the planner sees every key an
// operation will ask for at once and can pick the cheapest calls for all.
//
// Keys come in two ways:
//   - announced (Expect) by the planner itself when it hands out the
//     objects that will ask for them: the subcategories of a page of
//     roots, the parents of a page of categories. The first Load of an
//     announced key plans every announced key not planned yet, at once:
//     nobody waits for a timer, and one operation always gets one plan;
//   - unannounced (two root fields asking for two ids, say): gathered by a
//     dataloader for batchWait, then planned together with whatever was
//     announced meanwhile.
//
// Every key is planned once per operation; its answer is remembered.
type batcher[K comparable, V any] struct {
	plan func(context.Context, []K) ([]V, []error)

	mu        sync.Mutex
	announced []K                // announced, not planned yet, in order
	groupOf   map[K]*group[K, V] // made on first claim: most operations plan nothing here
	runs      flight.Once[*group[K, V], struct{}]
	late      *dataloadgen.Loader[K, V] // made on first use
}

// group is a set of keys planned together, and their answers once planned.
type group[K comparable, V any] struct {
	keys []K
	vals map[K]V
	errs map[K]error
}

func newBatcher[K comparable, V any](plan func(context.Context, []K) ([]V, []error)) *batcher[K, V] {
	return &batcher[K, V]{plan: plan}
}

// Expect announces keys the operation is about to ask for.
func (b *batcher[K, V]) Expect(keys ...K) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range keys {
		if b.groupOf[k] == nil {
			b.announced = append(b.announced, k)
		}
	}
}

// Load returns the answer for k, planning it (with company) if no group
// has yet.
func (b *batcher[K, V]) Load(ctx context.Context, k K) (V, error) {
	b.mu.Lock()
	g := b.groupOf[k]
	if g == nil && b.isAnnounced(k) {
		g = b.claim(nil)
	}
	if g == nil && b.late == nil {
		b.late = dataloadgen.NewLoader(b.planLate, dataloadgen.WithWait(batchWait))
	}
	late := b.late
	b.mu.Unlock()
	if g == nil {
		return late.Load(ctx, k)
	}
	return b.answer(ctx, g, k)
}

// planLate is the dataloader's batch function for unannounced keys: it
// claims those no group holds yet together with every announced key, plans
// them, and waits for the others' groups.
func (b *batcher[K, V]) planLate(ctx context.Context, keys []K) ([]V, []error) {
	b.mu.Lock()
	b.claim(keys)
	groups := make([]*group[K, V], len(keys))
	for i, k := range keys {
		groups[i] = b.groupOf[k]
	}
	b.mu.Unlock()
	vals, errs := make([]V, len(keys)), make([]error, len(keys))
	for i, k := range keys {
		vals[i], errs[i] = b.answer(ctx, groups[i], k)
	}
	return vals, errs
}

// answer runs g's plan if nobody has and returns k's part of it.
func (b *batcher[K, V]) answer(ctx context.Context, g *group[K, V], k K) (V, error) {
	_, err := b.runs.Do(ctx, g, func(ctx context.Context) (struct{}, error) {
		vals, errs := b.plan(ctx, g.keys)
		g.vals, g.errs = make(map[K]V, len(g.keys)), make(map[K]error, len(g.keys))
		for i, key := range g.keys {
			g.vals[key], g.errs[key] = vals[i], errs[i]
		}
		return struct{}{}, nil
	})
	if err != nil { // the plan panicked, or ctx ended while waiting
		var zero V
		return zero, err
	}
	return g.vals[k], g.errs[k]
}

// claim makes one group of keys and every announced key that no group
// holds yet, and returns it (nil when there is nothing to claim). b.mu is
// held.
func (b *batcher[K, V]) claim(keys []K) *group[K, V] {
	g := &group[K, V]{}
	if b.groupOf == nil {
		b.groupOf = map[K]*group[K, V]{}
	}
	for _, k := range append(slices.Clip(keys), b.announced...) {
		if b.groupOf[k] == nil {
			b.groupOf[k] = g
			g.keys = append(g.keys, k)
		}
	}
	b.announced = b.announced[:0]
	if len(g.keys) == 0 {
		return nil
	}
	return g
}

func (b *batcher[K, V]) isAnnounced(k K) bool {
	for _, a := range b.announced {
		if a == k {
			return true
		}
	}
	return false
}

// forget drops every answer and announcement, so that keys asked again
// are planned again: a write made what was read stale. Callers already
// waiting keep the answers they wait for.
func (b *batcher[K, V]) forget() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.groupOf = nil
	b.announced = b.announced[:0]
	b.late = nil
}
