package gqlhttp

import (
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// deferOutsideQuery refuses an operation other than a query that holds an
// active @defer: gqlgen's executor delivers deferred fragments for
// queries only, and a mutation's would answer null with no error, while
// their upstream calls are still made. Refused before it runs, as a
// validation failure, so that the mutation writes nothing.
func deferOutsideQuery(rc *graphql.OperationContext) gqlerror.List {
	op := rc.Operation
	if op == nil || op.Operation == ast.Query || !strings.Contains(rc.RawQuery, "defer") {
		return nil
	}
	d := activeDefer(op.SelectionSet, rc.Doc.Fragments, rc.Variables, map[string]bool{})
	if d == nil {
		return nil
	}
	err := gqlerror.ErrorPosf(d.Position, "@defer is supported in queries only, not in a %s: remove it (the %s answers in one piece)", op.Operation, op.Operation)
	errcode.Set(err, errcode.ValidationFailed)
	return gqlerror.List{err}
}

// activeDefer returns the first @defer of set (fragments included) that
// defers, as gqlgen reads its "if" argument.
func activeDefer(set ast.SelectionSet, frags ast.FragmentDefinitionList, vars map[string]any, seen map[string]bool) *ast.Directive {
	for _, sel := range set {
		var (
			dirs ast.DirectiveList
			sub  ast.SelectionSet
		)
		switch s := sel.(type) {
		case *ast.Field:
			sub = s.SelectionSet
		case *ast.InlineFragment:
			dirs, sub = s.Directives, s.SelectionSet
		case *ast.FragmentSpread:
			dirs = s.Directives
			if !seen[s.Name] {
				seen[s.Name] = true
				if f := frags.ForName(s.Name); f != nil {
					sub = f.SelectionSet
				}
			}
		}
		if d := dirs.ForName("defer"); d != nil && defers(d, vars) {
			return d
		}
		if d := activeDefer(sub, frags, vars, seen); d != nil {
			return d
		}
	}
	return nil
}

// defers reports whether d defers: its "if" is true or absent.
func defers(d *ast.Directive, vars map[string]any) bool {
	arg := d.Arguments.ForName("if")
	if arg == nil {
		return true
	}
	v, err := arg.Value.Value(vars)
	b, ok := v.(bool)
	return err == nil && ok && b
}
