package querylimit

import (
	"context"
	"math"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// DefaultMaxDeferredParts bounds the deferred parts of a streamed answer:
// a page of 100 items each deferring one fragment, as a list view that
// loads each row's slow field later does. Each part costs the server a
// goroutine, a payload encoded and written, and the client a patch to
// apply; 49 fragments over 100 categories made 3,001 of them (issue 25).
const DefaultMaxDeferredParts = 100

// DeferredParts estimates the parts a streamed answer to op makes beyond
// its initial payload: each active @defer (its "if" true or absent)
// counts once per object it applies to, that is the product of the sizes
// of the lists on its way from the root, as the cost model (es's
// complexity functions) sizes them: a field's multiplier is what one
// more unit of its selection adds to its cost (a connection's window, the
// ids of nodes). A @skip or @include that leaves a selection out leaves
// out its parts.
//
// It is an upper bound: gqlgen makes one part per object and label, and
// none for a fragment whose fields resolve without a resolver (they come
// with the initial payload). Like the complexity walk, it expands each
// fragment spread; the document limits bound that walk.
func DeferredParts(ctx context.Context, es graphql.ExecutableSchema, op *ast.OperationDefinition, vars map[string]any) int {
	w := partsWalker{ctx: ctx, es: es, schema: es.Schema(), vars: vars}
	return w.selectionSet(op.SelectionSet)
}

type partsWalker struct {
	ctx    context.Context
	es     graphql.ExecutableSchema
	schema *ast.Schema
	vars   map[string]any
}

// selectionSet counts the parts of set, for one object.
func (w partsWalker) selectionSet(set ast.SelectionSet) int {
	n := 0
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			if len(sel.SelectionSet) == 0 || !w.included(sel.Directives) {
				continue
			}
			if inner := w.selectionSet(sel.SelectionSet); inner > 0 {
				n = add(n, mul(w.multiplier(sel), inner))
			}
		case *ast.InlineFragment:
			if w.included(sel.Directives) {
				n = add(n, w.fragment(sel.Directives, sel.SelectionSet))
			}
		case *ast.FragmentSpread:
			if sel.Definition != nil && w.included(sel.Directives) {
				n = add(n, w.fragment(sel.Directives, sel.Definition.SelectionSet))
			}
		}
	}
	return n
}

// fragment counts a fragment's parts: its own when dirs defer it, and
// those within.
func (w partsWalker) fragment(dirs ast.DirectiveList, set ast.SelectionSet) int {
	n := w.selectionSet(set)
	if d := dirs.ForName("defer"); d != nil && w.ifArgument(d, true) {
		n = add(n, 1)
	}
	return n
}

// multiplier is how many objects field f may answer per object it is
// selected on: its cost model's growth per unit of selection (1 for a
// field without a cost function, whose cost is 1 plus its selection's).
// On an interface, the largest of its implementations'.
func (w partsWalker) multiplier(f *ast.Field) int {
	if f.ObjectDefinition == nil {
		return 1
	}
	types := []*ast.Definition{f.ObjectDefinition}
	if f.ObjectDefinition.IsAbstractType() {
		types = w.schema.GetPossibleTypes(f.ObjectDefinition)
	}
	args := f.ArgumentMap(w.vars)
	m := 1
	for _, t := range types {
		one, ok := w.es.Complexity(w.ctx, t.Name, f.Name, 1, args)
		if !ok {
			continue
		}
		zero, _ := w.es.Complexity(w.ctx, t.Name, f.Name, 0, args)
		m = max(m, one-zero)
	}
	return m
}

// included reports whether @skip and @include leave a selection in.
func (w partsWalker) included(dirs ast.DirectiveList) bool {
	if d := dirs.ForName("skip"); d != nil && w.ifArgument(d, false) {
		return false
	}
	if d := dirs.ForName("include"); d != nil && !w.ifArgument(d, true) {
		return false
	}
	return true
}

// ifArgument is d's "if" argument, or absent (or not a boolean) the value
// given.
func (w partsWalker) ifArgument(d *ast.Directive, absent bool) bool {
	arg := d.Arguments.ForName("if")
	if arg == nil {
		return absent
	}
	v, err := arg.Value.Value(w.vars)
	b, ok := v.(bool)
	if err != nil || !ok {
		return absent
	}
	return b
}

// mul is a saturating product of non-negative a and b.
func mul(a, b int) int {
	if a != 0 && b > math.MaxInt/a {
		return math.MaxInt
	}
	return a * b
}
