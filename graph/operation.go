package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/restclient"
)

// Planning is the gqlgen extension that lets the planner read each
// operation once, before any of its fields resolves: the ids its
// category(id:) fields look up, what its node and nodes fields ask, and
// which root fields hand out categories (planner.Operation). Then every
// root field's keys are planned together when the first asks, and
// nothing waits on a timer for company. It also tells the planner when
// each root field ends, however it ends (an argument refused before the
// resolver ran, a panic), so that a lookup waiting for a field's answer
// never waits for one that will not come.
type Planning struct{}

var (
	_ graphql.HandlerExtension     = Planning{}
	_ graphql.OperationInterceptor = Planning{}
	_ graphql.RootFieldInterceptor = Planning{}
)

// ExtensionName implements graphql.HandlerExtension.
func (Planning) ExtensionName() string { return "Planning" }

// Validate implements graphql.HandlerExtension.
func (Planning) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptOperation reads the operation for the request's planner.
func (Planning) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if p := planner.From(ctx); p != nil {
		p.Begin(readOperation(graphql.GetOperationContext(ctx)))
	}
	return next(ctx)
}

// InterceptRootField tells the planner when a root field has answered.
func (Planning) InterceptRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	if p, fc := planner.From(ctx), graphql.GetRootFieldContext(ctx); p != nil && fc != nil {
		defer p.RootFieldAnswered(fc.Field.Alias)
	}
	return next(ctx)
}

// readOperation is what the planner needs of oc's operation. Only a
// query's root fields hand out categories or look nodes up.
func readOperation(oc *graphql.OperationContext) planner.Operation {
	var op planner.Operation
	if oc == nil || oc.Operation == nil || oc.Operation.Operation != ast.Query {
		return op
	}
	for _, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Query"}) {
		// A deferred field may answer after the others: never waited for.
		waitable := !f.IsDeferred()
		switch f.Name {
		case "categories":
			if waitable {
				op.CategoryLists = append(op.CategoryLists, f.Alias)
			}
		case "category":
			if waitable {
				op.CategoryFields = append(op.CategoryFields, f.Alias)
			}
			if id, ok := f.ArgumentMap(oc.Variables)["id"].(string); ok {
				if canon, err := restclient.CanonicalID("id", id); err == nil {
					op.CategoryIDs = append(op.CategoryIDs, canon)
				}
			}
		case "node", "nodes":
			if ids := nodeFieldIDs(f.Name, f.ArgumentMap(oc.Variables)); len(ids) > 0 {
				op.Nodes = append(op.Nodes, nodeAsk(oc, f.Selections, ids))
			}
		}
	}
	return op
}
