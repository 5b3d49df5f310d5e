package graph

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"

	"github.com/suregql/suregql/internal/planning/paging"
	"github.com/suregql/suregql/internal/planning/planner"
)

const (
	validID     = "0b7c2a5e-1d3f-4a6b-8c9d-0e1f2a3b4c5d"
	validBraced = "{0B7C2A5E-1D3F-4A6B-8C9D-0E1F2A3B4C5D}"
)

func TestRootFieldCost(t *testing.T) {
	all := planner.CategoryFilter{}.List()
	income := planner.CategoryFilter{Classification: "income"}.List()
	children := planner.CategoryFilter{ParentID: validID}.List()
	for _, tc := range []struct {
		name  string
		field string
		args  map[string]any
		want  int
	}{
		// categories: pages of up to 100, chosen to fit the window.
		{"categories first 10", "categories", map[string]any{"first": int64(10)}, 1},
		{"categories first 10 from a variable", "categories", map[string]any{"first": json.Number("10")}, 1},
		{"categories without arguments", "categories", map[string]any{}, 1},
		// A cursor tells no length: of the pages 1 and 2 of 100 the window
		// 50..149 spans, only page 1 is certain (the list may end before
		// page 2).
		{"categories first 100 after offset 49", "categories", map[string]any{"first": int64(100), "after": paging.EncodeCursor(all, 49)}, 1},
		{"categories first 100 after offset 49 from variables", "categories", map[string]any{"first": json.Number("100"), "after": paging.EncodeCursor(all, 49)}, 1},
		{"categories first 50 after offset 49", "categories", map[string]any{"first": int64(50), "after": paging.EncodeCursor(all, 49)}, 1},
		// Whether the list still ends there is the upstream's to tell.
		{"categories after the last item", "categories", map[string]any{"first": int64(10), "after": paging.EncodeCursor(all, 199)}, 1},
		{"categories last 10 (the overflow probe)", "categories", map[string]any{"last": int64(10)}, 1},
		{"categories first 101", "categories", map[string]any{"first": int64(101)}, 0},
		{"categories first -1", "categories", map[string]any{"first": int64(-1)}, 0},
		{"categories first and last", "categories", map[string]any{"first": int64(1), "last": int64(1)}, 0},
		{"categories after a junk cursor", "categories", map[string]any{"after": "junk"}, 0},
		{"categories after a cursor of another filter", "categories", map[string]any{"after": paging.EncodeCursor(income, 49)}, 0},
		{"categories income after an income cursor", "categories", map[string]any{"classification": "INCOME", "first": int64(100), "after": paging.EncodeCursor(income, 49)}, 1},
		{"categories parentId not a UUID", "categories", map[string]any{"parentId": "42"}, 0},
		{"categories parentId", "categories", map[string]any{"parentId": validID, "first": int64(10)}, 1},
		// The cursor names the canonical id, as the resolver does.
		{"categories parentId in another form, with its cursor", "categories", map[string]any{"parentId": validBraced, "first": int64(100), "after": paging.EncodeCursor(children, 49)}, 1},
		{"categories rootsOnly", "categories", map[string]any{"rootsOnly": true, "first": int64(100)}, 1},

		// chats: fixed pages of 20.
		// The list's length is unknown: only page 1 is certain.
		{"chats first 100", "chats", map[string]any{"first": int64(100)}, 1},
		{"chats first 100 from a variable", "chats", map[string]any{"first": json.Number("100")}, 1},
		// A cursor tells no length either: of pages 1..6 of 20 only page 1
		// is certain.
		{"chats first 100 after a cursor", "chats", map[string]any{"first": int64(100), "after": paging.EncodeCursor("chats", 0)}, 1},
		{"chats first 20", "chats", map[string]any{"first": int64(20)}, 1},
		{"chats without arguments", "chats", map[string]any{}, 1},
		{"chats first 40 after offset 9", "chats", map[string]any{"first": int64(40), "after": paging.EncodeCursor("chats", 9)}, 1},
		{"chats last 1", "chats", map[string]any{"last": int64(1)}, 1},
		// totalCount and hasNextPage need the current length: one call.
		{"chats first 0 after the last item", "chats", map[string]any{"first": int64(0), "after": paging.EncodeCursor("chats", 249)}, 1},
		{"chats first 0", "chats", map[string]any{"first": int64(0)}, 1},
		{"chats after a categories cursor", "chats", map[string]any{"after": paging.EncodeCursor(all, 1)}, 0},
		// base64url of "c1:e3c260f121aa:0:250", the chats list's tag: an old
		// cursor that also carried a length is refused, costing nothing;
		// the same position as c2 is valid.
		{"chats after a c1 cursor", "chats", map[string]any{"after": "YzE6ZTNjMjYwZjEyMWFhOjA6MjUw"}, 0},
		{"chats after the c2 cursor of that position", "chats", map[string]any{"after": "YzI6ZTNjMjYwZjEyMWFhOjA"}, 1},
		{"chats first 1000", "chats", map[string]any{"first": int64(1000)}, 0},

		// One show each, when the id is a UUID.
		{"category", "category", map[string]any{"id": validID}, 1},
		{"category in braces", "category", map[string]any{"id": validBraced}, 1},
		{"category with a non-UUID id", "category", map[string]any{"id": "42"}, 0},
		{"category without id", "category", map[string]any{}, 0},
		{"chat", "chat", map[string]any{"id": validID}, 1},
		{"chat with a non-UUID id", "chat", map[string]any{"id": "chat-1"}, 0},
		{"import", "import", map[string]any{"id": validID}, 1},
		{"import with a non-UUID id", "import", map[string]any{"id": ""}, 0},
		// A described list (imports): its pages, by its description.
		{"imports without arguments", "imports", map[string]any{}, 1},
		{"imports first 100", "imports", map[string]any{"first": int64(100)}, 1},
		{"imports first 100 after offset 50", "imports", map[string]any{"first": int64(100), "after": paging.EncodeCursor("imports?status=&type=", 50)}, 1},
		{"imports of a status Sure has not", "imports", map[string]any{"status": "done"}, 0},
		{"imports first 101", "imports", map[string]any{"first": int64(101)}, 0},
		// node: at least the one lookup of a known id; nodes: at least one
		// when any id is valid (categories may share one page).
		{"node", "node", map[string]any{"id": validID}, 1},
		{"node with a non-UUID id", "node", map[string]any{"id": "Q2F0ZWdvcnk6MQ=="}, 0},
		{"nodes", "nodes", map[string]any{"ids": []any{validID, validBraced, "x"}}, 1},
		{"nodes of junk ids", "nodes", map[string]any{"ids": []any{"x", "y"}}, 0},
		{"nodes without ids", "nodes", map[string]any{"ids": []any{}}, 0},
		{"nodes of 101 ids", "nodes", map[string]any{"ids": manyIDs(101)}, 0},

		// Mutations: one write, unless the input is rejected locally.
		{"createChat", "createChat", map[string]any{"input": map[string]any{"title": "Groceries"}}, 1},
		{"createChat with a blank title", "createChat", map[string]any{"input": map[string]any{"title": " \t"}}, 0},
		{"createChat without a title", "createChat", map[string]any{"input": map[string]any{}}, 0},
		{"createChat without input", "createChat", map[string]any{}, 0},
		{"updateChat", "updateChat", map[string]any{"input": map[string]any{"id": validID, "title": "Rent"}}, 1},
		{"updateChat with a bad id", "updateChat", map[string]any{"input": map[string]any{"id": "7", "title": "Rent"}}, 0},
		{"updateChat with a blank title", "updateChat", map[string]any{"input": map[string]any{"id": validID, "title": ""}}, 0},

		// Free fields.
		{"rateLimit", "rateLimit", nil, 0},
		{"__typename", "__typename", nil, 0},
		{"__schema", "__schema", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := rootFieldCost(tc.field, tc.args); got != tc.want {
				t.Errorf("rootFieldCost(%q, %v) = %d, want %d", tc.field, tc.args, got, tc.want)
			}
		})
	}
}

// rootFieldCost is RootCost's figure for one root field with args as
// decoded from a request.
func rootFieldCost(field string, args map[string]any) int {
	typeName := "Query"
	if field == "createChat" || field == "updateChat" {
		typeName = "Mutation"
	}
	if cost, _, ok := describedRootCost(field, args); ok {
		return cost // a described resource's field, as RootCost counts it
	}
	var key string
	es := NewExecutableSchema(Config{Complexity: rootCalls(&key)})
	cost, _ := es.Complexity(context.Background(), typeName, field, 0, args)
	return cost
}

// operationContext builds the operation context gqlgen's executor builds for
// query and variables (as the HTTP transport decodes them: numbers as
// json.Number).
func operationContext(t *testing.T, query string, vars map[string]any) *graphql.OperationContext {
	t.Helper()
	exec := executor.New(NewExecutableSchema(Config{Resolvers: &Resolver{}}))
	oc, errs := exec.CreateOperationContext(graphql.StartOperationTrace(t.Context()), &graphql.RawParams{Query: query, Variables: vars})
	if len(errs) > 0 {
		t.Fatalf("operation %q: %v", query, errs)
	}
	return oc
}

func TestRootCost(t *testing.T) {
	for _, tc := range []struct {
		name  string
		query string
		vars  map[string]any
		want  int
	}{
		{"one list", `{ categories(first: 10) { totalCount } }`, nil, 1},
		{"identical aliases share their calls", `{ a: categories(first: 10) { totalCount } b: categories(first: 10) { totalCount } }`, nil, 1},
		{"different windows add up", `{ a: categories(first: 10) { totalCount } b: categories(first: 20) { totalCount } }`, nil, 2},
		{"lists and shows add up", `{ chats(first: 100) { totalCount } category(id: "` + validID + `") { id } }`, nil, 2},
		{"variables", `query($n: Int) { chats(first: $n) { totalCount } }`, map[string]any{"n": json.Number("100")}, 1},
		{"a variable and a literal of the same value share", `query($n: Int) { a: chats(first: $n) { totalCount } b: chats(first: 100) { totalCount } }`, map[string]any{"n": json.Number("100")}, 1},
		{"skipped fields cost nothing", `{ chats(first: 100) @skip(if: true) { totalCount } categories { totalCount } }`, nil, 1},
		{"fragments count", `{ ...F } fragment F on Query { chats(first: 100) { totalCount } }`, nil, 1},
		{"locally invalid fields cost nothing", `{ category(id: "42") { id } chat(id: "x") { id } }`, nil, 0},
		{"lookups by id share a floor of one", `{ category(id: "` + validID + `") { id } node(id: "` + validBraced + `") { id } nodes(ids: ["` + validID + `"]) { id } }`, nil, 1},
		{"an invalid lookup does not hide a valid one", `{ category(id: "42") { id } node(id: "` + validID + `") { id } }`, nil, 1},
		{"introspection is free", `{ __typename __schema { queryType { name } } }`, nil, 0},
		{"mutation", `mutation { createChat(input: {title: "Groceries"}) { chat { id } } }`, nil, 1},
		{"mutation with a blank title", `mutation { createChat(input: {title: "  "}) { chat { id } } }`, nil, 0},
		{"two different mutations", `mutation { a: createChat(input: {title: "A"}) { chat { id } } b: createChat(input: {title: "B"}) { chat { id } } }`, nil, 2},
		{"mutation input from a variable", `mutation($in: UpdateChatInput!) { updateChat(input: $in) { chat { id } } }`, map[string]any{"in": map[string]any{"id": validID, "title": "Rent"}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RootCost(t.Context(), operationContext(t, tc.query, tc.vars)); got != tc.want {
				t.Errorf("RootCost(%s) = %d, want %d", tc.query, got, tc.want)
			}
		})
	}
}

// TestRootCost_EquivalentFields: root fields whose arguments differ in form
// but not in meaning send the same GETs, which the operation's memo sends
// once; counting them twice refuses operations that fit the budget.
func TestRootCost_EquivalentFields(t *testing.T) {
	for _, tc := range []struct {
		name  string
		query string
		want  int
	}{
		{"default window and the same window spelled out", `{ a: chats { totalCount } b: chats(first: 20) { totalCount } }`, 1},
		{"a filter at its default", `{ a: categories(first: 10) { totalCount } b: categories(first: 10, rootsOnly: false) { totalCount } }`, 1},
		{"one id in two forms", `{ a: category(id: "` + validID + `") { id } b: category(id: "` + validBraced + `") { id } }`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RootCost(t.Context(), operationContext(t, tc.query, nil)); got != tc.want {
				t.Errorf("RootCost = %d, want %d: equivalent fields share their calls", got, tc.want)
			}
		})
	}
}

// manyIDs returns n valid ids, as decoded from a request.
func manyIDs(n int) []any {
	ids := make([]any, n)
	for i := range ids {
		ids[i] = validID
	}
	return ids
}
