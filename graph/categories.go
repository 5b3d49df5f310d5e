package graph

import (
	"context"

	"suregql/graph/loader"
	"suregql/graph/model"
	"suregql/paging"
	"suregql/restclient"
)

// DefaultCategoryPage is the window size when neither first nor last is given.
const DefaultCategoryPage = 25

func categoryConnection(list string, res paging.Result[*restclient.Category]) *model.CategoryConnection {
	cursors := edgeCursors(list, res)
	conn := &model.CategoryConnection{
		Edges:      make([]*model.CategoryEdge, len(res.Items)),
		Nodes:      make([]*model.Category, len(res.Items)),
		PageInfo:   &model.PageInfo{},
		TotalCount: res.Total,
	}
	for i, c := range res.Items {
		node := categoryFromREST(c)
		conn.Nodes[i] = node
		conn.Edges[i] = &model.CategoryEdge{Cursor: cursors[i], Node: node}
	}
	p := conn.PageInfo
	p.HasNextPage, p.HasPreviousPage, p.StartCursor, p.EndCursor = pageInfo(res, cursors)
	return conn
}

// categoryList validates the arguments of a category list and answers it.
func categoryList(ctx context.Context, f loader.CategoryFilter, args paging.Args, knownTotal int) (*model.CategoryConnection, error) {
	req, err := paging.Parse(f.List(), args, DefaultCategoryPage)
	if err != nil {
		return nil, err
	}
	if knownTotal >= 0 {
		req = req.WithKnownTotal(knownTotal)
	}
	if w, empty, known := req.Empty(); empty && known {
		// Empty by arithmetic: no key needed, no call made.
		return categoryConnection(f.List(), paging.Result[*restclient.Category]{Window: w}), nil
	}
	l, err := loader.For(ctx)
	if err != nil {
		return nil, err
	}
	res, err := l.Categories(ctx, f, req)
	if err != nil {
		return nil, err
	}
	return categoryConnection(f.List(), res), nil
}

// canonicalID validates a UUID argument locally, so that junk never reaches
// an upstream URL (a junk parent_id would even answer the root categories).
func canonicalID(arg, id string) (string, error) {
	c, err := restclient.CanonicalID(arg, id)
	if err != nil {
		return "", invalidID(arg, id)
	}
	return c, nil
}
