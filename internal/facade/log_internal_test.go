package facade

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestLogOperation_OffCostsNothing: the per-operation line is INFO; a
// server logging at WARN or above must not pay for building it.
func TestLogOperation_OffCostsNothing(t *testing.T) {
	warn := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	mw := logOperation(warn)
	ctx := graphql.WithOperationContext(context.Background(), &graphql.OperationContext{
		Operation: &ast.OperationDefinition{Operation: ast.Query, Name: "Tree"},
		Stats:     graphql.Stats{OperationStart: graphql.Now()},
	})
	resp := &graphql.Response{Data: []byte(`{"categories":null}`)}
	next := func(context.Context) *graphql.Response { return resp }
	if allocs := testing.AllocsPerRun(100, func() { mw(ctx, next) }); allocs != 0 {
		t.Errorf("an operation's log middleware with INFO off allocates %.0f times, want 0", allocs)
	}
}
