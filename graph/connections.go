package graph

import (
	"github.com/99designs/gqlgen/graphql"

	"suregql/graph/model"
	"suregql/paging"
)

func pageArgs(first *int, after *string, last *int, before *string) paging.Args {
	return paging.Args{First: first, After: after, Last: last, Before: before}
}

// window is what every connection type shares: the nodes of a page, their
// cursors, the Relay page info and the list's total.
type window[N any] struct {
	nodes   []N
	cursors []string
	info    *model.PageInfo
	total   int
}

// newWindow maps the items of res to nodes, each with the cursor that
// names it.
func newWindow[T, N any](res paging.Result[T], node func(T) N) window[N] {
	w := window[N]{
		nodes:   make([]N, len(res.Items)),
		cursors: res.Cursors(),
		info:    &model.PageInfo{HasNextPage: res.HasNextPage(), HasPreviousPage: res.HasPreviousPage()},
		total:   res.Total,
	}
	for i, it := range res.Items {
		w.nodes[i] = node(it)
	}
	if n := len(w.cursors); n > 0 {
		w.info.StartCursor, w.info.EndCursor = &w.cursors[0], &w.cursors[n-1]
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
