// Package graph is the GraphQL side of the facade: the gqlgen executable
// schema (generated.go), the resolvers, the mapping from upstream types to
// GraphQL models, and the error presenter.
package graph

import (
	"log/slog"
)

// Resolver holds the long-lived dependencies of the resolvers. gqlgen runs
// resolvers concurrently, so nothing here is mutated after construction;
// per-request state (the caller's key and loaders) lives in the context, see
// package loader.
type Resolver struct {
	Log *slog.Logger
}
