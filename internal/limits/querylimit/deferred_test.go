package querylimit_test

import (
	"context"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"github.com/suregql/suregql/graph"
	"github.com/suregql/suregql/internal/limits/querylimit"
)

// Each active @defer counts once per object it applies to: the product
// of the list windows around it, as the cost model sizes them.
func TestDeferredParts(t *testing.T) {
	es := graph.NewExecutableSchema(graph.Config{Resolvers: &graph.Resolver{}, Complexity: graph.Complexity()})
	for _, tc := range []struct {
		name  string
		query string
		vars  map[string]any
		want  int
	}{
		{"none", `{ categories(first: 100) { nodes { name parent { name } } } }`, nil, 0},
		{"on one object", `{ chat(id: "x") { title ... @defer { messages { totalCount } } } }`, nil, 1},
		{"once per item", `{ categories(first: 100) { nodes { name ... @defer { parent { name } } } } }`, nil, 100},
		{"the default window", `{ chats { nodes { ... @defer { messages { totalCount } } } } }`, nil, 20},
		{"a window from a variable", `query($n: Int) { categories(first: $n) { nodes { ... @defer { parent { name } } } } }`, map[string]any{"n": int64(7)}, 7},
		{"each fragment", `{ categories(first: 10) { nodes { ... @defer(label: "a") { parent { name } } ... @defer(label: "b") { color } } } }`, nil, 20},
		{"nested, multiplied by the lists between", `{ categories(first: 10) { nodes { ... @defer { subcategories(first: 5) { nodes { ... @defer { parent { name } } } } } } } }`, nil, 10 + 10*5},
		{"a spread", `{ categories(first: 10) { nodes { ...F @defer } } } fragment F on Category { parent { name } }`, nil, 10},
		{"within a spread", `{ categories(first: 10) { nodes { ...F } } } fragment F on Category { ... @defer { parent { name } } }`, nil, 10},
		{"if: false defers nothing", `query($d: Boolean!) { categories(first: 10) { nodes { ... @defer(if: $d) { parent { name } } } } }`, map[string]any{"d": false}, 0},
		{"if: true", `query($d: Boolean!) { categories(first: 10) { nodes { ... @defer(if: $d) { parent { name } } } } }`, map[string]any{"d": true}, 10},
		{"skipped", `{ categories(first: 10) @skip(if: true) { nodes { ... @defer { parent { name } } } } }`, nil, 0},
		{"not included", `{ categories(first: 10) { nodes { ... @include(if: false) @defer { parent { name } } } } }`, nil, 0},
		{"nodes by id, per id", `{ nodes(ids: ["a", "b", "c"]) { ... on Category { ... @defer { parent { name } } } } }`, nil, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, errs := gqlparser.LoadQueryWithRules(es.Schema(), tc.query, rules.NewDefaultRules())
			if len(errs) > 0 {
				t.Fatalf("invalid query: %v", errs)
			}
			if got := querylimit.DeferredParts(context.Background(), es, doc.Operations[0], tc.vars); got != tc.want {
				t.Errorf("DeferredParts = %d, want %d", got, tc.want)
			}
		})
	}
}
