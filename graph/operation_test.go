package graph

import (
	"reflect"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/planning/planner"
)

// readOperation is what the planner learns of an operation before any
// field asks: every key its root fields will ask (so the first plans them
// all, with no timer), and the root fields lookups wait for.
func TestReadOperation(t *testing.T) {
	other := strings.Replace(validID, "0", "1", 1)
	for _, tc := range []struct {
		name  string
		query string
		vars  map[string]any
		want  planner.Operation
	}{
		{"category lookups and a list", `{ a: category(id: "` + validID + `") { id } b: category(id: $id) { id } c: categories { totalCount } }`,
			map[string]any{"id": other}, planner.Operation{
				CategoryIDs: []string{validID, other}, CategoryFields: []string{"a", "b"}, CategoryLists: []string{"c"},
			}},
		{"an invalid id is announced to no one", `{ category(id: "42") { id } }`, nil,
			planner.Operation{CategoryFields: []string{"category"}}},
		{"skipped fields are not read", `{ category(id: "` + validID + `") @skip(if: true) { id } categories @include(if: false) { totalCount } }`, nil,
			planner.Operation{}},
		{"deferred lists are not waited for", `{ ... @defer { categories { totalCount } } }`, nil,
			planner.Operation{}},
		{"node fields", `{ node(id: "` + validBraced + `") { id } nodes(ids: ["` + other + `", "x"]) { id ... on Chat { title } } }`, nil,
			planner.Operation{Nodes: []planner.NodeAsk{
				{IDs: []string{validID}, Summaries: true},
				{IDs: []string{other}, Summaries: true},
			}}},
		{"a mutation hands nothing out", `mutation { createChat(input: {title: "t"}) { chat { id } } }`, nil,
			planner.Operation{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			query := tc.query
			if tc.vars != nil {
				query = "query($id: ID!) " + query
			}
			got := readOperation(operationContext(t, query, tc.vars))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("readOperation = %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
