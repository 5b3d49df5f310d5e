package gqlhttp

import (
	"context"

	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/internal/state/callerkey"
)

type callerCtxKey struct{}

// withCaller returns ctx carrying the request's caller, made once from
// its X-Api-Key header (the one place it is read; an Authorization header
// is never forwarded), and the planner that serves the request's
// operations with it: the raw key for the upstream request, the keyed
// identity every store and map knows it by, and the key's error.
// Everything below receives the caller; nothing reads the header again.
func withCaller(ctx context.Context, shared *planner.Shared, caller callerkey.Caller) context.Context {
	ctx = context.WithValue(ctx, callerCtxKey{}, caller)
	return planner.WithPlanner(ctx, planner.New(shared, caller))
}

// CallerID returns the keyed identity of the request's caller, or "" when
// the request has no usable key (or did not pass Handler).
func CallerID(ctx context.Context) string {
	c, ok := ctx.Value(callerCtxKey{}).(callerkey.Caller)
	if !ok || c.Err != nil {
		return ""
	}
	return c.Key.ID()
}
