package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// marshalList marshals the n elements of a list of objects selected with
// sel; the executor calls it where gqlgen's own code calls
// graphql.MarshalSliceConcurrently (see graph/gen), with the same
// arguments.
//
// When the selection reaches a field gqlgen resolves on a goroutine of its
// own (a resolver such as Category.parent, at any depth), the elements are
// marshalled concurrently, as gqlgen does: the resolvers of sibling
// elements must reach the loaders together to be batched into one
// upstream call. Otherwise every field is a plain read of the model, and
// the elements are marshalled in order on this goroutine, which saves a
// goroutine, its stack growth and its scheduling per element. They then
// share one element field context, its index moved along: an element is
// done with it when its marshal returns (nothing of it runs later, and an
// error takes its path when it is added), so one context serves them all
// where gqlgen makes one per element.
//
//nolint:unparam // workerLimit and omitPanicHandler are gqlgen.yml's, passed by the generated code
func marshalList(ctx context.Context, sel ast.SelectionSet, n int, workerLimit int64, omitPanicHandler bool,
	marshal func(ctx context.Context, i int) graphql.Marshaler,
) graphql.Array {
	if n > 1 && reachesResolver(sel) {
		return graphql.MarshalSliceConcurrently(ctx, n, workerLimit, omitPanicHandler, marshal)
	}
	ret := make(graphql.Array, n)
	failed := false
	index := 0
	elem := &graphql.FieldContext{Index: &index}
	elemCtx := graphql.WithFieldContext(ctx, elem)
	for i := range n {
		index, elem.Result = i, nil
		if omitPanicHandler {
			ret[i] = marshal(elemCtx, i)
			continue
		}
		func() {
			// As gqlgen's: a panicking element is an error on its path
			// and makes the whole list null.
			defer func() {
				if r := recover(); r != nil {
					graphql.AddError(elemCtx, graphql.Recover(elemCtx, r))
					failed = true
				}
			}()
			ret[i] = marshal(elemCtx, i)
		}()
	}
	if failed {
		return nil
	}
	return ret
}

// reachesResolver reports whether sel selects, at any depth and through
// fragments, a field in resolvedFields, or a field of an interface or a
// union (whose concrete fields are not known here).
func reachesResolver(sel ast.SelectionSet) bool {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if def := s.ObjectDefinition; def == nil || def.Kind != ast.Object || resolvedFields[def.Name+"."+s.Name] {
				return true
			}
			if reachesResolver(s.SelectionSet) {
				return true
			}
		case *ast.InlineFragment:
			if reachesResolver(s.SelectionSet) {
				return true
			}
		case *ast.FragmentSpread:
			if s.Definition == nil || reachesResolver(s.Definition.SelectionSet) {
				return true
			}
		}
	}
	return false
}
