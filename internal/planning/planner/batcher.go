package planner

import (
	"context"
	"slices"
	"sync"

	"github.com/suregql/suregql/internal/planning/flight"
)

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
//   - unannounced (a key no answer nor the operation's reading foresaw):
//     planned at once, together with whatever is announced by then.
//
// The operation's own root fields are announced before any asks
// (Planner.Begin), so no key waits on a timer for company. Every key is
// planned once per operation; its answer is remembered.
type batcher[K comparable, V any] struct {
	plan func(context.Context, []K) ([]V, []error)

	mu        sync.Mutex
	announced []K                // announced, not planned yet, in order
	groupOf   map[K]*group[K, V] // made on first claim: most operations plan nothing here
	runs      flight.Once[*group[K, V], struct{}]
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

// Load returns the answer for k, planning it, with every key announced
// and not planned yet, if no group has yet.
func (b *batcher[K, V]) Load(ctx context.Context, k K) (V, error) {
	b.mu.Lock()
	g := b.groupOf[k]
	if g == nil {
		g = b.claim([]K{k})
	}
	b.mu.Unlock()
	return b.answer(ctx, g, k)
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

// forget drops every answer and announcement, so that keys asked again
// are planned again: a write made what was read stale. Callers already
// waiting keep the answers they wait for.
func (b *batcher[K, V]) forget() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.groupOf = nil
	b.announced = b.announced[:0]
}
