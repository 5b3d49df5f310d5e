package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"suregql/graph/model"
	"suregql/paging"
	"suregql/planner"
	"suregql/restclient"
)

// DefaultCategoryPage is the window size when neither first nor last is given.
const DefaultCategoryPage = 25

func categoryConnection(list string, res paging.Result[*restclient.Category]) *model.CategoryConnection {
	w := newWindow(list, res, categoryFromREST)
	conn := &model.CategoryConnection{Nodes: w.nodes, PageInfo: w.info, TotalCount: w.total, Edges: make([]*model.CategoryEdge, len(w.nodes))}
	for i, n := range w.nodes {
		conn.Edges[i] = &model.CategoryEdge{Cursor: w.cursors[i], Node: n}
	}
	return conn
}

// categoryList validates the arguments of a category list and answers it.
// knownTotal is the list's length when known without a call (-1 if not).
// children, when set, names the root whose subcategories the list is:
// they are planned with the operation's other subcategories (see
// planner.Children) and windowed in memory.
func categoryList(ctx context.Context, f planner.CategoryFilter, args paging.Args, knownTotal int, children *model.Category) (*model.CategoryConnection, error) {
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
	l, err := planner.For(ctx)
	if err != nil {
		return nil, err
	}
	var res paging.Result[*restclient.Category]
	if children != nil {
		all, err := l.Children(ctx, parentKey(children))
		if err != nil {
			return nil, err
		}
		res = paging.Slice(req, all)
	} else if res, err = l.Categories(ctx, f, req); err != nil {
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

// subcategories answers Category.subcategories. subcategories_count is
// current as of the answer that held the category: a leaf (count 0) or a
// subcategory needs no call; up to 100 subcategories are planned together
// with every other category of the operation (see planner.Children); more
// are paged like any list.
func subcategories(ctx context.Context, obj *model.Category, args paging.Args) (*model.CategoryConnection, error) {
	f := planner.CategoryFilter{ParentID: obj.ID}
	count := obj.SubcategoriesCount
	if obj.ParentID != "" {
		count = 0 // two levels only
	}
	if count == 0 || count > planner.MaxBatchedChildren {
		return categoryList(ctx, f, args, count, nil)
	}
	return categoryList(ctx, f, args, count, obj)
}

// wantsSubcategories reports whether the category list being resolved
// selects subcategories on its nodes (through nodes or edges.node).
func wantsSubcategories(ctx context.Context) bool {
	oc := graphql.GetOperationContext(ctx)
	has := func(sel []graphql.CollectedField, name string) bool {
		for _, f := range sel {
			if f.Name == name {
				return true
			}
		}
		return false
	}
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
		switch f.Name {
		case "nodes":
			if has(graphql.CollectFields(oc, f.Selections, []string{"Category"}), "subcategories") {
				return true
			}
		case "edges":
			for _, e := range graphql.CollectFields(oc, f.Selections, []string{"CategoryEdge"}) {
				if e.Name == "node" && has(graphql.CollectFields(oc, e.Selections, []string{"Category"}), "subcategories") {
					return true
				}
			}
		}
	}
	return false
}

// windowSize is the number of items a connection asks for.
func windowSize(a paging.Args, def int) int {
	switch {
	case a.First != nil:
		return *a.First
	case a.Last != nil:
		return *a.Last
	}
	return def
}

// parentKey names a category for the subcategory planner.
func parentKey(c *model.Category) planner.ParentKey {
	return planner.ParentKey{ID: c.ID, Classification: classificationToREST(c.Classification), Count: c.SubcategoriesCount}
}
