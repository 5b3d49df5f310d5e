package flight

import (
	"context"
	"errors"
	"runtime/debug"
	"sync"
)

// Once remembers one result per key for its own lifetime: the first caller
// of a key runs fn on its own goroutine, every later caller gets the same
// value and error, waiting while it runs. It is the operation-scoped
// counterpart of Group (which forgets a result as soon as its callers have
// it): one GraphQL operation asks for the same upstream page, family read
// or subcategory list from many resolvers, and must pay for it once.
//
// Unlike Group, the run is not cancelled when a caller goes away: a Once
// lives inside one operation, whose context ends every caller together.
// A panic in fn becomes a *PanicError for every caller.
//
// The zero value is ready to use; a Once must not be copied after first use.
type Once[K comparable, V any] struct {
	// RetryErrors drops a result that is an error as its call ends: the
	// callers of that call get the error, and the next Do runs again.
	// Without it an error is remembered like a value.
	RetryErrors bool

	mu      sync.Mutex
	results map[K]*result[V]
}

type result[V any] struct {
	done chan struct{}
	val  V
	err  error
}

// errUnfinished is what a result holds until fn returns, so that a run
// that ends without returning (runtime.Goexit) leaves an error, never a
// zero value passed off as an answer.
var errUnfinished = errors.New("flight: call did not finish")

// Do returns the result of fn for key, running fn only if no caller has
// asked for key before (or since Forget). A caller whose ctx ends while it
// waits gets ctx.Err(); the run goes on for the others.
func (o *Once[K, V]) Do(ctx context.Context, key K, fn func(context.Context) (V, error)) (V, error) {
	o.mu.Lock()
	if o.results == nil {
		o.results = map[K]*result[V]{}
	}
	r, ok := o.results[key]
	if !ok {
		r = &result[V]{done: make(chan struct{}), err: errUnfinished}
		o.results[key] = r
	}
	o.mu.Unlock()
	if !ok {
		r.run(ctx, fn)
		if r.err != nil && o.RetryErrors {
			o.mu.Lock()
			if o.results[key] == r {
				delete(o.results, key)
			}
			o.mu.Unlock()
		}
	}
	return r.wait(ctx)
}

// run calls fn on the caller's goroutine: the first caller waits for it
// anyway, and its stack is the one a profile should show.
func (r *result[V]) run(ctx context.Context, fn func(context.Context) (V, error)) {
	defer close(r.done) // waiters must never hang
	defer func() {
		if v := recover(); v != nil {
			r.err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	r.val, r.err = fn(ctx)
}

func (r *result[V]) wait(ctx context.Context) (V, error) {
	select {
	case <-r.done:
		return r.val, r.err
	case <-ctx.Done():
		var zero V
		return zero, ctx.Err()
	}
}

// Offer remembers v as key's result when no call for key has started, and
// reports whether it did: a result learnt on the way (a page that turned
// out to hold the whole list) without running anything.
func (o *Once[K, V]) Offer(key K, v V) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.results == nil {
		o.results = map[K]*result[V]{}
	}
	if _, ok := o.results[key]; ok {
		return false
	}
	r := &result[V]{done: make(chan struct{}), val: v}
	close(r.done)
	o.results[key] = r
	return true
}

// Done returns key's result when a call for it has finished, without
// waiting or starting one; ok is false when none has.
func (o *Once[K, V]) Done(key K) (v V, ok bool, err error) {
	o.mu.Lock()
	r := o.results[key]
	o.mu.Unlock()
	if r == nil || !isClosed(r.done) {
		return v, false, nil
	}
	return r.val, true, r.err
}

// Wait waits for a call for key that has started, without starting one;
// ok is false when none has.
func (o *Once[K, V]) Wait(ctx context.Context, key K) (v V, ok bool, err error) {
	o.mu.Lock()
	r := o.results[key]
	o.mu.Unlock()
	if r == nil {
		return v, false, nil
	}
	v, err = r.wait(ctx)
	return v, true, err
}

// Forget drops the results of the keys drop selects (a finished call that
// failed, or answers a write made stale), so that the next Do runs again.
// Callers already waiting for a dropped call still get its result.
func (o *Once[K, V]) Forget(drop func(K) bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k := range o.results {
		if drop(k) {
			delete(o.results, k)
		}
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
