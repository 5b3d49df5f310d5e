// Package graph is the GraphQL side of the facade: the gqlgen executable
// schema (generated.go), the resolvers, the mapping from upstream types to
// GraphQL models, and the error presenter.
//
// Resolvers validate their arguments, ask the request's planner (package
// planner) for the upstream data, and map it to models: which upstream
// calls an operation makes is decided in package planner alone.
package graph

import "github.com/suregql/suregql/internal/planning/live"

// Resolver is the root of the resolvers. The resolvers' one dependency is
// the request's *planner.Planner, made per request by the HTTP edge from
// the caller and the server's long-lived planner.Shared (the upstream
// client, caches and limits). A request without it is a wiring bug,
// answered INTERNAL, never blamed on the caller's key. Live, the
// subscriptions' poll loops, is the server's one Hub; nil refuses
// subscriptions (INTERNAL).
type Resolver struct {
	Live *live.Hub
}
