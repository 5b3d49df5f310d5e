package graph

import (
	"context"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/suregql/suregql/graph/model"
	"github.com/suregql/suregql/restclient"
)

// imports is Sure's imports on the resource layer (restclient.Imports):
// Query.imports and Query.import, and node(id) of an Import. An import of
// the list lacks its configuration, its stats but the row count and some
// of its status detail: the hooks say when a selection reads those.
var imports = describe(&described[restclient.ImportSummary, restclient.Import, model.Import, model.ImportEdge, model.ImportConnection]{
	coll:     restclient.Imports,
	fromList: importFromSummary,
	fromShow: importFromREST,
	edge: func(cursor string, n *model.Import) *model.ImportEdge {
		return &model.ImportEdge{Cursor: cursor, Node: n}
	},
	conn: func(w window[*model.Import, *model.ImportEdge]) *model.ImportConnection {
		return &model.ImportConnection{Nodes: w.nodes, Edges: w.edges, PageInfo: w.info, TotalCount: w.total}
	},
	lookup:      importLookupWanted,
	listAnswers: importListAnswers,
})

// importLookupWanted returns what tells, for an import of the list,
// whether the selection of the imports list reads what the list did not
// send of it (configuration, stats beyond rowsCount, a flag of
// statusDetail it lacks), through nodes or edges.node: the planner then
// looks those imports up together. nil when no import needs it.
func importLookupWanted(ctx context.Context) func(*restclient.ImportSummary) bool {
	oc := graphql.GetOperationContext(ctx)
	var imports []graphql.CollectedField
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
		switch f.Name {
		case "nodes":
			imports = append(imports, collect(oc, f, "Import")...)
		case "edges":
			for _, e := range collect(oc, f, "ImportEdge") {
				if e.Name == "node" {
					imports = append(imports, collect(oc, e, "Import")...)
				}
			}
		}
	}
	var details []graphql.CollectedField
	for _, f := range imports {
		switch f.Name {
		case "configuration":
			return func(*restclient.ImportSummary) bool { return true }
		case "stats":
			if !wantsOnly(collect(oc, f, "ImportStats"), "rowsCount") {
				return func(*restclient.ImportSummary) bool { return true }
			}
		case "statusDetail":
			details = append(details, collect(oc, f, "ImportStatusDetail")...)
		}
	}
	if len(details) == 0 {
		return nil
	}
	return func(s *restclient.ImportSummary) bool {
		return s.StatusDetail != nil && !detailHolds(statusDetailFromREST(s.StatusDetail), details)
	}
}

// detailHolds reports whether d holds every flag fields read: the list
// sends some of them only.
func detailHolds(d *model.ImportStatusDetail, fields []graphql.CollectedField) bool {
	for _, f := range fields {
		var v *bool
		switch f.Name {
		case "uploaded":
			v = d.Uploaded
		case "configured":
			v = d.Configured
		case "terminal":
			v = d.Terminal
		case "cleaned":
			v = d.Cleaned
		case "publishable":
			v = d.Publishable
		case "revertable":
			v = d.Revertable
		default:
			continue // __typename
		}
		if v == nil {
			return false
		}
	}
	return true
}

// importShown returns the show answer of an import: the one it was mapped
// from, or one lookup (once per operation) for an import of the list.
func importShown(ctx context.Context, obj *model.Import) (*restclient.Import, error) {
	if obj.Shown != nil {
		return obj.Shown, nil
	}
	return imports.shown(ctx, obj.ID)
}

// importListAnswers reports whether an import of the list answers a node
// field's selection of an Import: neither its configuration, nor its
// stats beyond the row count, nor its status detail (the list sends some
// flags only).
func importListAnswers(oc *graphql.OperationContext, fields []graphql.CollectedField) bool {
	for _, f := range fields {
		switch f.Name {
		case "configuration", "statusDetail":
			return false
		case "stats":
			if !wantsOnly(collect(oc, f, "ImportStats"), "rowsCount") {
				return false
			}
		}
	}
	return true
}

// createCategoryRequest checks createCategory's input locally: a blank
// name, or a parent id that is no UUID, costs no call.
func createCategoryRequest(in model.CreateCategoryInput) (restclient.CreateCategoryRequest, []*model.UserError) {
	req := restclient.CreateCategoryRequest{Name: strings.TrimSpace(in.Name)}
	var errs []*model.UserError
	switch {
	case req.Name == "":
		errs = append(errs, &model.UserError{Field: []string{"input", "name"}, Message: "Name can't be blank", Code: "BLANK"})
	case unstorable(req.Name):
		errs = append(errs, unstorableError("name"))
	}
	if in.Color != nil && unstorable(*in.Color) {
		errs = append(errs, unstorableError("color"))
	}
	if in.Icon != nil && unstorable(*in.Icon) {
		errs = append(errs, unstorableError("icon"))
	}
	if in.Color != nil {
		req.Color = *in.Color
	}
	if in.Icon != nil {
		req.Icon = *in.Icon
	}
	if in.ParentID != nil {
		id, err := canonicalID("parentId", *in.ParentID)
		if err != nil {
			errs = append(errs, &model.UserError{Field: []string{"input", "parentId"}, Message: "parentId is not a valid category id (a UUID)", Code: "INVALID_ID"})
		}
		req.ParentID = id
	}
	return req, errs
}

// unstorable reports whether s holds a NUL byte, which Sure's database
// (PostgreSQL) refuses in text: the upstream would fail with a 500, which
// reads as a write whose outcome is unknown.
func unstorable(s string) bool { return strings.IndexByte(s, 0) >= 0 }

// unstorableError is the user error of an input field unstorable refuses.
func unstorableError(field string) *model.UserError {
	return &model.UserError{Field: []string{"input", field}, Message: field + " holds a NUL character, which Sure cannot store", Code: "INVALID"}
}
