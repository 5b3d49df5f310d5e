package graph

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"unicode"

	"github.com/99designs/gqlgen/graphql"

	"github.com/suregql/suregql/graph/model"
	"github.com/suregql/suregql/internal/planning/paging"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/restclient"
	"github.com/suregql/suregql/restclient/resource"
)

// described is a resource of the resource layer as the schema serves it:
// its collection (restclient), its model N (the GraphQL type of the same
// name), its connection C and edge E, and how an object maps from an
// element of the list (L) or a show's answer (S). Its root fields,
// Query.<name> and Query.<kind> by the description's names in lower
// camel case ("imports", "import"), resolve in one line each (list,
// show); node(id) maps its objects, and the cost models count its
// fields, by the same value (describe registers it).
type described[L, S, N, E, C any] struct {
	coll     *restclient.Collection[L, S]
	fromList func(*L) *N
	fromShow func(*S) *N
	edge     func(cursor string, node *N) *E
	conn     func(window[*N, *E]) *C
	// lookup, when set, returns for the list field being resolved what
	// tells which listed objects its selection reads more of than the
	// list sends: those are looked up together (planner.List). nil (or
	// a nil func): none.
	lookup func(ctx context.Context) func(*L) bool
	// listAnswers, when set, reports whether an element of the list
	// answers a node field's selection of N (fields): else the node is
	// looked up by its show. nil: always (the list sends what the show
	// does).
	listAnswers func(oc *graphql.OperationContext, fields []graphql.CollectedField) bool
}

// describedField is what the schema's generic code reads of a described
// resource, its types erased.
type describedField interface {
	spec() *resource.Spec
	typeName() string
	node(planner.Object) model.Node
	answersFromList(oc *graphql.OperationContext, fields []graphql.CollectedField) bool
}

// describedResources are the described resources the schema serves, by
// description; describedRoots the same by root field (list and show).
var (
	describedResources = map[*resource.Spec]describedField{}
	describedRoots     = map[string]describedRoot{}
)

// describedRoot is a root field of a described resource.
type describedRoot struct {
	spec *resource.Spec
	list bool // Query.<name>; else Query.<kind>, the show
}

// describe registers d for node(id) and the cost models, and returns it.
func describe[L, S, N, E, C any](d *described[L, S, N, E, C]) *described[L, S, N, E, C] {
	spec := d.coll.Spec
	describedResources[spec] = d
	describedRoots[lowerCamel(string(spec.Name))] = describedRoot{spec: spec, list: true}
	describedRoots[lowerCamel(spec.Kind)] = describedRoot{spec: spec}
	return d
}

// embedAnswers reports whether the object spec's objects embed in field
// answers a selection of it (fields) at no call: it reads nothing but
// the members the embedded object carries (resource.Embed, by their
// GraphQL names).
func embedAnswers(spec *resource.Spec, field string, fields []graphql.CollectedField) bool {
	e := spec.Embedded(field)
	if e == nil {
		return false
	}
	carried := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		carried[i] = lowerCamel(f)
	}
	return wantsOnly(fields, carried...)
}

// lowerCamel turns Sure's snake_case into GraphQL's lowerCamelCase.
func lowerCamel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			r := []rune(parts[i])
			r[0] = unicode.ToUpper(r[0])
			parts[i] = string(r)
		}
	}
	return strings.Join(parts, "")
}

// list resolves the list field: a window of the list with filters f.
func (d *described[L, S, N, E, C]) list(ctx context.Context, args paging.Args, f resource.Values) (*C, error) {
	req, err := planner.ParseList(d.coll.Spec, f, args)
	if err != nil {
		return nil, err
	}
	p, err := planner.For(ctx)
	if err != nil {
		return nil, err
	}
	var lookup func(*L) bool
	if d.lookup != nil {
		lookup = d.lookup(ctx)
	}
	res, err := planner.List(ctx, p, d.coll, f, req, lookup)
	if err != nil {
		return nil, err
	}
	return d.conn(newWindow(ctx, reflect.TypeFor[C]().Name(), res, d.fromList, d.edge)), nil
}

// show resolves the show field: one object by id.
func (d *described[L, S, N, E, C]) show(ctx context.Context, id string) (*N, error) {
	id, err := canonicalID("id", id)
	if err != nil {
		return nil, err
	}
	p, err := planner.For(ctx)
	if err != nil {
		return nil, err
	}
	s, err := planner.Show(ctx, p, d.coll, id)
	if err != nil {
		return nil, err
	}
	return d.fromShow(s), nil
}

// shown returns the show answer of an object of the list, read once per
// operation (the list's lookup may have read it already).
func (d *described[L, S, N, E, C]) shown(ctx context.Context, id string) (*S, error) {
	p, err := planner.For(ctx)
	if err != nil {
		return nil, err
	}
	return planner.Show(ctx, p, d.coll, id)
}

func (d *described[L, S, N, E, C]) spec() *resource.Spec { return d.coll.Spec }

func (d *described[L, S, N, E, C]) typeName() string { return reflect.TypeFor[N]().Name() }

// node maps what node(id) found of the resource.
func (d *described[L, S, N, E, C]) node(obj planner.Object) model.Node {
	var n *N
	switch {
	case obj.Shown != nil:
		n = d.fromShow(obj.Shown.(*S))
	case obj.Listed != nil:
		n = d.fromList(obj.Listed.(*L))
	default:
		return nil
	}
	node, _ := any(n).(model.Node)
	return node
}

func (d *described[L, S, N, E, C]) answersFromList(oc *graphql.OperationContext, fields []graphql.CollectedField) bool {
	return d.listAnswers == nil || d.listAnswers(oc, fields)
}

// describedRootCost is the cost model of RootCost for a root field of a
// described resource: its list's pages for the window asked (paging.Request.Calls
// at its largest page), or one show; key names the requests, so that
// aliases share their calls. ok is false for a field of no described
// resource.
func describedRootCost(field string, args map[string]any) (cost int, key string, ok bool) {
	root, ok := describedRoots[field]
	if !ok {
		return 0, "", false
	}
	spec := root.spec
	if !root.list {
		id, _ := args["id"].(string)
		canon, err := canonicalID("id", id)
		if err != nil {
			return 0, "", true
		}
		return 1, spec.Kind + " " + canon, true
	}
	f := resource.Values{}
	for _, flt := range spec.Filters {
		if v, err := graphql.UnmarshalString(args[flt.Arg]); err == nil && args[flt.Arg] != nil {
			f[flt.Arg] = []string{v}
		}
	}
	req, err := planner.ParseList(spec, f, paging.Args{
		First: intPtrArg(args["first"]), After: stringArg(args["after"]),
		Last: intPtrArg(args["last"]), Before: stringArg(args["before"]),
	})
	if err != nil {
		return 0, "", true
	}
	fixed := 0
	if spec.Paging.Style == resource.FixedPages {
		fixed = spec.Paging.PerPage
	}
	calls := 1
	if spec.Paging.Style != resource.Unpaginated {
		calls = req.Calls(fixed, spec.Paging.MaxPerPage)
	}
	return calls, fmt.Sprintf("%s %+v", spec.Name, req), true
}

// describedComplexity is the cost model of Complexity for a list field of
// a described resource: a connection of its window.
func describedComplexity(typeName, field string, child int, args map[string]any) (int, bool) {
	if root, ok := describedRoots[field]; !ok || typeName != "Query" || !root.list {
		return 0, false
	}
	return connectionCost(child, intPtrArg(args["first"]), intPtrArg(args["last"]), planner.DefaultListPage), true
}

// intPtrArg reads an Int argument of an argument map (nil when absent or
// not an Int).
func intPtrArg(v any) *int {
	n, ok := intArg(v)
	if !ok {
		return nil
	}
	return &n
}

// stringArg reads a String argument of an argument map.
func stringArg(v any) *string {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	return &s
}
