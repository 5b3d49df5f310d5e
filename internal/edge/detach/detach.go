// Package detach runs an operation on a context its request's end does not
// cancel, while the operation's upstream calls still end with the request.
//
// gqlgen's executor collects an answer's deferred fragments (@defer) from
// senders that give up when the operation's context ends, while the
// goroutine reading them waits with no context: an operation whose client
// went away mid-stream would leave that goroutine parked forever. Run on
// Operation's context, the fragments are always sent (so the reader can
// drain them and end); the request's cancellation and deadline travel in
// the context as a value, and the fetch path (restclient, a wait for a
// call shared with other requests) takes them back with Live, so that a
// departed client's work makes no new call and its calls in flight end at
// once, and the operation's deadline still fails the calls not answered.
package detach

import (
	"context"
	"time"
)

type requestKey struct{}

// Operation returns a context with req's values that req's cancellation
// and deadline do not end, carrying req for Live.
func Operation(req context.Context) context.Context {
	return context.WithValue(context.WithoutCancel(req), requestKey{}, req)
}

// Live returns ctx ending also when the request of the Operation context
// it derives from ends, with that request's deadline; ctx itself when it
// derives from none. Call stop once done with it.
func Live(ctx context.Context) (live context.Context, stop func()) {
	req, ok := ctx.Value(requestKey{}).(context.Context)
	if !ok {
		return ctx, func() {}
	}
	if ctx.Done() == nil {
		// Nothing of ctx's own can end it (the usual case: the operation
		// adds values only): the request's end is its end.
		return requestEnded{Context: ctx, req: req}, func() {}
	}
	merged, cancel := context.WithCancelCause(ctx)
	stopDeadline := func() {}
	if d, ok := req.Deadline(); ok {
		merged, stopDeadline = context.WithDeadline(merged, d)
	}
	unhook := context.AfterFunc(req, func() { cancel(req.Err()) })
	return merged, func() {
		unhook()
		stopDeadline()
		cancel(context.Canceled)
	}
}

// Shared returns ctx without the request Operation carried: the context
// of work that serves several requests (a call others joined), which one
// of them leaving must not end.
func Shared(ctx context.Context) context.Context {
	if _, ok := ctx.Value(requestKey{}).(context.Context); !ok {
		return ctx
	}
	return context.WithValue(ctx, requestKey{}, nil)
}

// requestEnded is a context with the values of Context and the deadline,
// Done and Err of req.
type requestEnded struct {
	context.Context
	req context.Context
}

func (c requestEnded) Deadline() (time.Time, bool) { return c.req.Deadline() }
func (c requestEnded) Done() <-chan struct{}       { return c.req.Done() }
func (c requestEnded) Err() error                  { return c.req.Err() }
