package graph

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/complexity"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// attack4 is the answer-multiplying cycle of the schema: k laps of
// subcategories → nodes → parent under one category.
func attack4(k int, window string) string {
	args := ""
	if window != "" {
		args = "(first: " + window + ")"
	}
	return `{ category(id: "0b7c2a5e-1d3f-4a6b-8c9d-0e1f2a3b4c5d") {` +
		strings.Repeat(" subcategories"+args+" { nodes { parent {", k) + " id" + strings.Repeat(" } } }", k) + " } }"
}

func cost(t *testing.T, query string, vars map[string]any) int {
	t.Helper()
	es := NewSchema(Config{Resolvers: &Resolver{}, Complexity: Complexity()})
	doc, errs := gqlparser.LoadQueryWithRules(es.Schema(), query, rules.NewDefaultRules())
	if len(errs) > 0 {
		t.Fatalf("invalid query: %v", errs)
	}
	return complexity.Calculate(context.Background(), es, doc.Operations[0], vars)
}

func TestComplexity(t *testing.T) {
	for _, tc := range []struct {
		name  string
		query string
		vars  map[string]any
		want  int
	}{
		{"scalar", `{ rateLimit { limit } }`, nil, 2},
		{"default category page", `{ categories { nodes { id } } }`, nil, 1 + 25*2},
		{"default chat page", `{ chats { nodes { id } } }`, nil, 1 + 20*2},
		// A described resource's list (imports) is counted from its
		// description, as every connection is.
		{"default import page", `{ imports { nodes { id } } }`, nil, 1 + 25*2},
		{"imports first from a variable", `query($n: Int) { imports(first: $n, status: "complete") { totalCount nodes { id type } } }`, map[string]any{"n": int64(4)}, 1 + 4*(1+3)},
		{"first", `{ categories(first: 10) { totalCount nodes { id name } } }`, nil, 1 + 10*(1+3)},
		{"last", `{ categories(last: 3) { nodes { id } } }`, nil, 1 + 3*2},
		{"first from a variable", `query($n: Int) { categories(first: $n) { nodes { id } } }`, map[string]any{"n": int64(4)}, 1 + 4*2},
		{"above the maximum counts as the maximum", `{ categories(first: 1000) { nodes { id } } }`, nil, 1 + 100*2},
		{"negative counts as empty", `{ categories(first: -5) { nodes { id } } }`, nil, 1},
		{"zero", `{ categories(first: 0) { nodes { id } } }`, nil, 1},
		{"first and last count as the larger", `{ categories(first: 2, last: 7) { nodes { id } } }`, nil, 1 + 7*2},
		{"edges are the list too", `{ categories(first: 10) { edges { cursor node { id } } } }`, nil, 1 + 10*(1+1+2)},
		{"subcategories multiply", `{ categories(first: 10) { nodes { subcategories(first: 5) { nodes { id } } } } }`, nil, 1 + 10*(1+(1+5*2))},
		{"default subcategory page", `{ category(id: "x") { subcategories { nodes { id } } } }`, nil, 1 + 1 + 25*2},
		{"default message page", `{ chat(id: "x") { messages { nodes { id } } } }`, nil, 1 + 1 + 25*2},
		{"tool calls", `{ chat(id: "x") { messages(first: 2) { nodes { toolCalls { id } } } } }`, nil, 1 + 1 + 2*(1+(1+5*1))},
		{"a fragment counts where it is spread", `{ categories(first: 10) { nodes { ...F } } } fragment F on Category { id name }`, nil, 1 + 10*3},
		{"the README's demo tree", `{ categories(rootsOnly: true, first: 100) { totalCount nodes { name color subcategoriesCount subcategories(first: 50) { nodes { name parent { name } } } } } }`, nil, 20_601},
		{"the tree of 100 roots", `{ categories(rootsOnly: true, first: 100) { nodes { name subcategories(first: 50) { nodes { name parent { name color } } } } } }`, nil, 25_301},
		// A lap costs 1 + window × (2 + the lap inside): 76, 1,951,
		// 48,826… with the default page of 25.
		{"attack 4, 1 lap", attack4(1, ""), nil, 1 + 76},
		{"attack 4, 3 laps", attack4(3, ""), nil, 1 + 48_826},
		{"attack 4, 4 laps", attack4(4, ""), nil, 1 + 1_220_701},
		{"attack 4, 5 laps", attack4(5, ""), nil, 1 + 30_517_576},
		{"attack 4, 9 laps of 100", attack4(9, "100"), nil, 3_030_303_030_303_030_302},
		{"attack 4, 10 laps of 100 saturates", attack4(10, "100"), nil, math.MaxInt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cost(t, tc.query, tc.vars); got != tc.want {
				t.Errorf("complexity = %d, want %d", got, tc.want)
			}
		})
	}
}
