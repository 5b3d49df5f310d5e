// Package flight runs one call per key at a time on behalf of every caller
// that asks for that key while the call runs, as singleflight does, with
// two differences that a server facing the open internet needs:
//
//   - the call runs on its own goroutine with its own context, which is
//     cancelled as soon as no caller waits for it any more (a client that
//     went away stops the upstream work it started, unless another caller
//     still wants the answer);
//   - a panic inside the call becomes an error for every caller of that
//     call, instead of a re-panic on a goroutine nobody can recover.
package flight

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/suregql/suregql/internal/edge/detach"
)

// PanicError is the error callers receive when the shared call panicked.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("flight: shared call panicked: %v", e.Value) }

// Group runs calls keyed by K. The zero value is ready to use; a Group must
// not be copied after first use.
type Group[K comparable, V any] struct {
	mu    sync.Mutex
	calls map[K]*call[V]
}

type call[V any] struct {
	done    chan struct{}
	val     V
	err     error
	waiters int // callers still waiting; guarded by Group.mu
	cancel  context.CancelFunc
}

// Do returns the result of fn for key. When a call for key is running, Do
// waits for it instead of starting another; otherwise it starts fn on a new
// goroutine with a context that keeps ctx's values but not its
// cancellation. That context is cancelled when every waiting caller has
// returned early (its own context ended), so nobody pays for work nobody
// reads. started reports whether this caller started the call.
//
// A caller whose ctx ends first gets ctx.Err() at once.
func (g *Group[K, V]) Do(ctx context.Context, key K, fn func(context.Context) (V, error)) (v V, started bool, err error) {
	// A caller whose operation runs past its request (@defer) is gone
	// when the request ended: it starts nothing, and leaves then.
	ctx, stop := detach.Live(ctx)
	defer stop()
	if err := ctx.Err(); err != nil {
		var zero V
		return zero, false, err
	}
	g.mu.Lock()
	if g.calls == nil {
		g.calls = map[K]*call[V]{}
	}
	c, ok := g.calls[key]
	if ok {
		c.waiters++
	} else {
		runCtx, cancel := context.WithCancel(context.WithoutCancel(detach.Shared(ctx)))
		c = &call[V]{done: make(chan struct{}), waiters: 1, cancel: cancel}
		g.calls[key] = c
		go g.run(runCtx, key, c, fn)
	}
	g.mu.Unlock()

	select {
	case <-c.done:
		return c.val, !ok, c.err
	case <-ctx.Done():
		g.leave(key, c)
		var zero V
		return zero, !ok, ctx.Err()
	}
}

// Waiting returns how many callers wait for calls in flight now.
func (g *Group[K, V]) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, c := range g.calls {
		n += c.waiters
	}
	return n
}

func (g *Group[K, V]) run(ctx context.Context, key K, c *call[V], fn func(context.Context) (V, error)) {
	defer func() {
		if r := recover(); r != nil {
			c.err = &PanicError{Value: r, Stack: debug.Stack()}
		}
		g.mu.Lock()
		if g.calls[key] == c {
			delete(g.calls, key)
		}
		c.waiters = 0
		g.mu.Unlock()
		c.cancel()
		close(c.done)
	}()
	c.val, c.err = fn(ctx)
}

// leave records that a caller stopped waiting for c. The last one to leave
// cancels the call and unlists it, so that a later caller starts afresh
// rather than joining a call that is being torn down.
func (g *Group[K, V]) leave(key K, c *call[V]) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c.waiters--
	if c.waiters > 0 {
		return
	}
	if g.calls[key] == c {
		delete(g.calls, key)
	}
	c.cancel()
}
