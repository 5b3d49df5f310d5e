package facade

import (
	"context"
	"net/http"

	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/internal/state/callerkey"
)

type callerCtxKey struct{}

// withCaller is the one place the X-Api-Key header is read (an
// Authorization header is never forwarded). It makes the request's
// caller once, from ring: the raw key for the upstream request, the keyed
// identity every store and map knows it by, and the key's error; and the
// planner that serves the request's operations with it. Everything below
// receives the caller; nothing reads the header again.
func withCaller(ring *callerkey.Ring, shared *planner.Shared, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller := ring.Caller(r.Header.Get("X-Api-Key"))
		next.ServeHTTP(w, r.WithContext(withCallerCtx(r.Context(), shared, caller)))
	})
}

// withCallerCtx returns ctx carrying caller and a planner serving it.
func withCallerCtx(ctx context.Context, shared *planner.Shared, caller callerkey.Caller) context.Context {
	ctx = context.WithValue(ctx, callerCtxKey{}, caller)
	return planner.WithPlanner(ctx, planner.New(shared, caller))
}

// callerID returns the keyed identity of the request's caller, or "" when
// the request has no usable key (or did not pass withCaller).
func callerID(ctx context.Context) string {
	c, ok := ctx.Value(callerCtxKey{}).(callerkey.Caller)
	if !ok || c.Err != nil {
		return ""
	}
	return c.Key.ID()
}
