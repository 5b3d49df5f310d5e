package main

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// workload is one operation, repeated, as each implementation asks it.
type workload struct {
	name           string
	ours, tailcall operation
}

// operation is a GraphQL query with its variables, and what every answer's
// data must hold.
type operation struct {
	query  string
	vars   map[string]any
	checks []check
}

// check counts the values at a path of the answer's data: lists on the way
// are walked through, and null or "" counts for nothing. So
// {"categories", "nodes"} counts a page's nodes, and {"categories",
// "nodes", "subcategories", "nodes"} all the subcategories of all of them.
type check struct {
	path []string
	want int
}

// verify returns an error naming the first check that data fails.
func verify(data any, checks []check) error {
	for _, c := range checks {
		if got := count(data, c.path); got != c.want {
			return fmt.Errorf("%s: got %d, want %d", strings.Join(c.path, "."), got, c.want)
		}
	}
	return nil
}

func count(v any, path []string) int {
	switch v := v.(type) {
	case []any:
		n := 0
		for _, e := range v {
			n += count(e, path)
		}
		return n
	case map[string]any:
		if len(path) == 0 {
			return 1
		}
		return count(v[path[0]], path[1:])
	case nil:
		return 0
	case string:
		if len(path) == 0 && v != "" {
			return 1
		}
		return 0
	default:
		if len(path) == 0 {
			return 1
		}
		return 0
	}
}

// workloads returns the six operations, with the ids and the cursor they
// need taken from the fake and from the facade itself (at ourURL), and the
// counts their answers must hold taken from the fake's data.
//
// Tailcall has no Relay connections: its operations (against
// bench/tailcall/sure.graphql) ask the same upstream pages through
// page/perPage arguments, and the same fields.
func workloads(fake *restclienttest.Server, hc *http.Client, ourURL string) ([]workload, error) {
	cats := fake.Categories(restclienttest.DemoKey)
	sub, ok := fake.CategoryByName(restclienttest.DemoKey, "Restaurants")
	if !ok || sub.ParentID == "" {
		return nil, errors.New("the demo family has no subcategory Restaurants")
	}
	imports := fake.ImportIDs(restclienttest.DemoKey)
	if len(imports) == 0 {
		return nil, errors.New("the demo family has no import")
	}
	chats := len(fake.Chats(restclienttest.DemoKey))
	roots, subs := treeSizes(cats, 100, 50)
	// W6 starts after offset 29: its cursor is the 30th edge of a first
	// window, as a client paging forward would have it.
	var first struct {
		Categories struct{ Edges []struct{ Cursor string } }
	}
	if err := post(hc, ourURL, restclienttest.DemoKey, `{ categories(first: 30) { edges { cursor } } }`, nil, &first); err != nil {
		return nil, fmt.Errorf("cursor of offset 29: %w", err)
	}
	if len(first.Categories.Edges) != 30 {
		return nil, fmt.Errorf("cursor of offset 29: got %d edges", len(first.Categories.Edges))
	}
	byID := map[string]any{"id": sub.ID}
	parentColor := []check{{[]string{"category", "name"}, 1}, {[]string{"category", "parent", "color"}, 1}}
	importStatus := []check{{[]string{"import", "status"}, 1}}
	window := min(30, max(0, len(cats)-30))
	return []workload{
		{
			name: "W1 categories(first: 10)",
			ours: operation{
				query:  `{ categories(first: 10) { nodes { id name } } }`,
				checks: []check{{[]string{"categories", "nodes", "name"}, min(10, len(cats))}},
			},
			tailcall: operation{
				query:  `{ categories(perPage: 10) { categories { id name } } }`,
				checks: []check{{[]string{"categories", "categories", "name"}, min(10, len(cats))}},
			},
		},
		{
			name: "W2 roots with subcategories",
			ours: operation{
				query: `{ categories(rootsOnly: true, first: 100) { nodes { name subcategories(first: 50) { nodes { name } } } } }`,
				checks: []check{
					{[]string{"categories", "nodes", "name"}, roots},
					{[]string{"categories", "nodes", "subcategories", "nodes", "name"}, subs},
				},
			},
			tailcall: operation{
				query: `{ categories(rootsOnly: true, perPage: 100) { categories { name subcategories { categories { name } } } } }`,
				checks: []check{
					{[]string{"categories", "categories", "name"}, roots},
					{[]string{"categories", "categories", "subcategories", "categories", "name"}, subs},
				},
			},
		},
		{
			name: "W3 category(id) { parent { name color } }",
			ours: operation{vars: byID, checks: parentColor,
				query: `query($id: ID!) { category(id: $id) { name parent { name color } } }`},
			tailcall: operation{vars: byID, checks: parentColor,
				query: `query($id: ID!) { category(id: $id) { name parent { name color } } }`},
		},
		{
			name: "W4 import(id) { status }",
			ours: operation{vars: map[string]any{"id": imports[0]}, checks: importStatus,
				query: `query($id: ID!) { import(id: $id) { status } }`},
			tailcall: operation{vars: map[string]any{"id": imports[0]}, checks: importStatus,
				query: `query($id: ID!) { import(id: $id) { status } }`},
		},
		{
			name: "W5 chats(first: 20)",
			ours: operation{
				query:  `{ chats(first: 20) { nodes { id title } } }`,
				checks: []check{{[]string{"chats", "nodes", "id"}, min(20, chats)}},
			},
			tailcall: operation{
				query:  `{ chats { chats { id title } } }`,
				checks: []check{{[]string{"chats", "chats", "id"}, min(20, chats)}},
			},
		},
		{
			name: "W6 categories(first: 30) at offset 30",
			ours: operation{vars: map[string]any{"after": first.Categories.Edges[29].Cursor},
				query:  `query($after: String) { categories(first: 30, after: $after) { nodes { name } } }`,
				checks: []check{{[]string{"categories", "nodes", "name"}, window}},
			},
			// Offset 30 is the start of page 2 of 30.
			tailcall: operation{
				query:  `{ categories(page: 2, perPage: 30) { categories { name } } }`,
				checks: []check{{[]string{"categories", "categories", "name"}, window}},
			},
		},
	}, nil
}

// treeSizes returns how many roots the first rootsPage roots hold, and how
// many subcategories their first subsPage subcategories each: what W2 must
// answer.
func treeSizes(cats []restclienttest.Category, rootsPage, subsPage int) (roots, subs int) {
	children := map[string]int{}
	var rootIDs []string
	for _, c := range cats {
		if c.ParentID == "" {
			rootIDs = append(rootIDs, c.ID)
		} else {
			children[c.ParentID]++
		}
	}
	rootIDs = rootIDs[:min(rootsPage, len(rootIDs))]
	for _, id := range rootIDs {
		subs += min(subsPage, children[id])
	}
	return len(rootIDs), subs
}
