package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/suregql/suregql/graph/model"
	"github.com/suregql/suregql/internal/planning/paging"
)

func pageArgs(first *int, after *string, last *int, before *string) paging.Args {
	return paging.Args{First: first, After: after, Last: last, Before: before}
}

// window is what every connection type shares: the nodes of a page, their
// edges (each node with its cursor), the Relay page info and the list's
// total.
type window[N, E any] struct {
	nodes []N
	edges []E
	info  *model.PageInfo
	total int
}

// connectionReads is what the selection of a connection reads beyond its
// nodes: its edges, and any cursor (an edge's, or pageInfo's first and
// last), each an encoding that `nodes { id name }` need not pay for.
type connectionReads struct{ edges, cursors bool }

// readsOf returns what the selection of the connection field being
// resolved, of type typeName, reads; everything when ctx resolves no field.
func readsOf(ctx context.Context, typeName string) connectionReads {
	if !graphql.HasOperationContext(ctx) || graphql.GetFieldContext(ctx) == nil {
		return connectionReads{edges: true, cursors: true}
	}
	var r connectionReads
	for _, f := range graphql.CollectFieldsCtx(ctx, []string{typeName}) {
		switch f.Name {
		case "edges":
			r.edges, r.cursors = true, true
		case "pageInfo":
			r.cursors = true
		}
	}
	return r
}

// newWindow maps the items of res to nodes, and to edges by edge, for the
// connection field of type connType being resolved: cursors are encoded,
// and edges made, only when its selection reads them (readsOf).
func newWindow[T, N, E any](ctx context.Context, connType string, res paging.Result[T], node func(T) N, edge func(cursor string, node N) E) window[N, E] {
	reads := readsOf(ctx, connType)
	w := window[N, E]{
		nodes: make([]N, len(res.Items)),
		info:  &model.PageInfo{HasNextPage: res.HasNextPage(), HasPreviousPage: res.HasPreviousPage()},
		total: res.Total,
	}
	for i, it := range res.Items {
		w.nodes[i] = node(it)
	}
	if !reads.cursors {
		return w
	}
	cursors := res.Cursors()
	if n := len(cursors); n > 0 {
		w.info.StartCursor, w.info.EndCursor = &cursors[0], &cursors[n-1]
	}
	if reads.edges {
		w.edges = make([]E, len(w.nodes))
		for i, n := range w.nodes {
			w.edges[i] = edge(cursors[i], n)
		}
	}
	return w
}

// wantsOnly reports whether the field being resolved selects nothing but
// the given fields (and __typename), so that what is already known answers
// it without a call.
func wantsOnly(fields []graphql.CollectedField, allowed ...string) bool {
	for _, f := range fields {
		ok := f.Name == "__typename"
		for _, a := range allowed {
			ok = ok || f.Name == a
		}
		if !ok {
			return false
		}
	}
	return true
}
