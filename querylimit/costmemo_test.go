package querylimit_test

import (
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"suregql/querylimit"
)

// A cost is computed once per operation without variables (its query and
// operation name), and every time for an operation with variables.
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
	withVars := &graphql.OperationContext{RawQuery: "query($n: Int) { a(n: $n) }",
		Operation: &ast.OperationDefinition{VariableDefinitions: ast.VariableDefinitionList{{Variable: "n"}}}}
	cost(withVars, 1)
	cost(withVars, 1)
	if computed != 5 {
		t.Errorf("computed %d times, want 5 (3 operations without variables, twice one with)", computed)
	}
}
