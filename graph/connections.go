package graph

import (
	"github.com/99designs/gqlgen/graphql"

	"suregql/paging"
)

func pageArgs(first *int, after *string, last *int, before *string) paging.Args {
	return paging.Args{First: first, After: after, Last: last, Before: before}
}

// edgeCursors returns the cursor of every item of res, in order.
func edgeCursors[T any](list string, res paging.Result[T]) []string {
	cursors := make([]string, len(res.Items))
	for i := range res.Items {
		cursors[i] = paging.EncodeCursor(list, res.Start+i, res.Total)
	}
	return cursors
}

// pageInfo builds the Relay page info of a window.
func pageInfo[T any](res paging.Result[T], cursors []string) (hasNext, hasPrev bool, start, end *string) {
	if n := len(cursors); n > 0 {
		start, end = &cursors[0], &cursors[n-1]
	}
	return res.HasNextPage(), res.HasPreviousPage(), start, end
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
