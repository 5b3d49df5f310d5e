package querylimit_test

import (
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/suregql/suregql/internal/limits/querylimit"
)

// A cost is computed once per operation (its query and operation name) and
// variables' values.
func TestCostMemo(t *testing.T) {
	var m querylimit.CostMemo
	computed := 0
	cost := func(oc *graphql.OperationContext, v int) int {
		return m.Of(oc, func() int { computed++; return v })
	}
	plain := func(query, name string) *graphql.OperationContext {
		return &graphql.OperationContext{RawQuery: query, OperationName: name, Operation: &ast.OperationDefinition{}}
	}
	if got := cost(plain("{ a }", ""), 3); got != 3 {
		t.Errorf("first = %d, want 3", got)
	}
	if got := cost(plain("{ a }", ""), 99); got != 3 {
		t.Errorf("same operation = %d, want the remembered 3", got)
	}
	if got := cost(plain("query A { a } query B { b }", "B"), 5); got != 5 {
		t.Errorf("another operation = %d, want 5", got)
	}
	if got := cost(plain("query A { a } query B { b }", "A"), 7); got != 7 {
		t.Errorf("another operation of the same document = %d, want 7", got)
	}
	withVars := func(vars map[string]any) *graphql.OperationContext {
		return &graphql.OperationContext{RawQuery: "query($n: Int, $f: In) { a(n: $n, f: $f) }", Variables: vars,
			Operation: &ast.OperationDefinition{VariableDefinitions: ast.VariableDefinitionList{{Variable: "n"}, {Variable: "f"}}}}
	}
	filter := func(tags ...any) map[string]any { return map[string]any{"tags": tags, "on": true, "none": nil} }
	for _, tc := range []struct {
		vars map[string]any
		want int // the cost returned
	}{
		{map[string]any{"n": json.Number("10"), "f": filter("a", "b")}, 10},
		{map[string]any{"f": filter("a", "b"), "n": json.Number("10")}, 10}, // the same values
		{map[string]any{"n": json.Number("11"), "f": filter("a", "b")}, 11},
		{map[string]any{"n": json.Number("10"), "f": filter("ab")}, 12},
		{map[string]any{"n": json.Number("10"), "f": filter("a", "b")}, 10}, // remembered
		{map[string]any{"n": struct{}{}}, 13},                               // not JSON: computed
		{map[string]any{"n": struct{}{}}, 14},
	} {
		if got := cost(withVars(tc.vars), tc.want); got != tc.want {
			t.Errorf("cost with %v = %d, want %d", tc.vars, got, tc.want)
		}
	}
	if computed != 8 {
		t.Errorf("computed %d times, want 8 (3 operations without variables, 3 values of variables, twice values not JSON)", computed)
	}
}
