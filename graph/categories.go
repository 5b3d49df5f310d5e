package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/suregql/suregql/graph/model"
	"github.com/suregql/suregql/internal/planning/paging"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/restclient"
	"github.com/suregql/suregql/restclient/resource"
)

// categoryConnection maps a window of a category list.
func categoryConnection(ctx context.Context, res paging.Result[*restclient.Category]) *model.CategoryConnection {
	w := newWindow(ctx, "CategoryConnection", res, categoryFromREST, func(cursor string, n *model.Category) *model.CategoryEdge {
		return &model.CategoryEdge{Cursor: cursor, Node: n}
	})
	return &model.CategoryConnection{Nodes: w.nodes, Edges: w.edges, PageInfo: w.info, TotalCount: w.total}
}

// categoryFilter checks the filter arguments of Query.categories.
func categoryFilter(classification *model.CategoryClassification, rootsOnly *bool, parentID *string) (planner.CategoryFilter, error) {
	var f planner.CategoryFilter
	if classification != nil {
		f.Classification = classificationToREST(*classification)
	}
	if rootsOnly != nil {
		f.RootsOnly = *rootsOnly
	}
	if parentID != nil {
		id, err := canonicalID("parentId", *parentID)
		if err != nil {
			return f, err
		}
		f.ParentID = id
	}
	return f, nil
}

// canonicalID validates a UUID argument locally, so that junk never reaches
// an upstream URL (a junk parent_id would even answer the root categories).
// The error is a *badinput.Error naming arg.
func canonicalID(arg, id string) (string, error) {
	return restclient.CanonicalID(arg, id)
}

// categoryWant tells the planner what a selection of Category fields
// reads beyond the category's own answer.
func categoryWant(oc *graphql.OperationContext, fields []graphql.CollectedField) planner.Want {
	var w planner.Want
	for _, f := range fields {
		switch f.Name {
		case "subcategories":
			w.Subcategories = true
		case "parent":
			// The child's answer embeds its parent's id and name.
			w.Parent = w.Parent || !embedAnswers(resource.Categories, "parent", collect(oc, f, "Category"))
		}
	}
	return w
}

// nodeWant is categoryWant for the nodes of the connection being
// resolved, selected through nodes or edges.node.
func nodeWant(ctx context.Context) planner.Want {
	oc := graphql.GetOperationContext(ctx)
	var w planner.Want
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
		var nodes []graphql.CollectedField
		switch f.Name {
		case "nodes":
			nodes = collect(oc, f, "Category")
		case "edges":
			for _, e := range collect(oc, f, "CategoryEdge") {
				if e.Name == "node" {
					nodes = append(nodes, collect(oc, e, "Category")...)
				}
			}
		}
		n := categoryWant(oc, nodes)
		w.Subcategories = w.Subcategories || n.Subcategories
		w.Parent = w.Parent || n.Parent
	}
	return w
}

// collect returns what f selects on objects of typeName.
func collect(oc *graphql.OperationContext, f graphql.CollectedField, typeName string) []graphql.CollectedField {
	return graphql.CollectFields(oc, f.Selections, []string{typeName})
}
