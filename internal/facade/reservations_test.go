package facade_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// One page of 100 roots of the large family with their subcategories costs
// the family's 50 pages, and one chats field beside it one call more: 51
// of a budget of 100 (the default), or the tree alone of 99. The family's
// pages are reserved once, as one round of paging.Load, so both answer
// whole (they were refused when the family read reserved its pages and
// Load reserved them again).
func TestReservations_FamilyReadIsReservedOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		budget int
		query  string
	}{
		{"default budget, tree and chats", facade.DefaultMaxUpstreamCalls,
			`{ chats(first: 1) { totalCount } categories(rootsOnly: true, first: 100) { nodes { name subcategories(first: 50) { nodes { name parent { name color } } } } } }`},
		{"budget 99, tree alone", 99, treeQuery},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, withConfig(func(c *facade.Config) { c.MaxUpstreamCalls = tc.budget }))
			key := restclienttest.LargeFamilyKey
			r := e.do(key, tc.query, nil)
			if len(r.errs) > 0 {
				t.Fatalf("%d errors (first at %v: %v), want none: the operation needs at most 51 calls of %d (spent %d)",
					len(r.errs), r.errs[0].Path, r.errs[0].Extensions, tc.budget, r.calls)
			}
			if r.calls > 51 {
				t.Errorf("upstream calls = %d, want at most 51", r.calls)
			}
			var out struct{ Categories categoryConn }
			if err := json.Unmarshal(r.data, &out); err != nil {
				t.Fatal(err)
			}
			wantTree(t, e, key, out.Categories.Nodes)
		})
	}
}

// Two node fields of unknown ids of a large family (its size, and the
// lengths of its chat and import lists, known from an earlier operation)
// are planned together, as one batch on the first field's context: each
// id costs a category, a chat and an import show (the family's 50 pages,
// the chat list's 13 and the import list's 2 are no fewer than the two
// ids), and both the account list's one page, 7 calls reserved at once,
// of a budget of 7; both answer null.
func TestReservations_ABatchMayDoAnotherFieldsWork(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.MaxUpstreamCalls = 7 }))
	key := restclienttest.LargeFamilyKey
	// Reads the family's first page: its size (5,000) is remembered.
	e.do(key, `{ a: node(id: "6f1c1c1e-0000-4000-8000-000000000fff") { id } b: node(id: "6f1c1c1e-0000-4000-8000-000000001fff") { id } }`, nil)
	for round := range 5 {
		q := fmt.Sprintf(`{ a: node(id: "6f1c1c1e-0000-4000-8000-0000000%05d") { id } b: node(id: "6f1c1c1e-0000-4000-8000-0000001%05d") { id } }`, round, round)
		r := e.do(key, q, nil)
		if len(r.errs) > 0 {
			t.Fatalf("round %d: errors %v at %v (%v), want none: both fields need 3 calls each and the account list, 7 of 7 (spent %d)", round, r.errs, r.errs[0].Path, r.errs[0].Extensions, r.calls)
		}
		wantCalls(t, r, 7)
	}
}

// nodes(ids:) of unknown ids of the (small) demo family plans the
// family's first page for the category probes, then, for the ids it
// proves are no categories, the chat, import and account lists' first
// page (fewer calls than a show each): 4 calls, reserved at once, whatever
// the number of ids. A budget of 5 holds them, and so does a standard
// key's 25 for twelve ids (a show each would be 1+12+12+1 = 26).
func TestReservations_AffordableWithinAReservationCountsItsOwnCalls(t *testing.T) {
	t.Parallel()
	t.Run("budget 5, two ids", func(t *testing.T) {
		e := newEnv(t, withConfig(func(c *facade.Config) { c.MaxUpstreamCalls = 5 }))
		wantNodesNull(t, e, restclienttest.DemoKey, 2, 4)
	})
	t.Run("default budget, standard key, twelve ids", func(t *testing.T) {
		e := newEnv(t, withConfig(func(c *facade.Config) { c.MaxUpstreamCalls = facade.DefaultMaxUpstreamCalls }))
		wantNodesNull(t, e, restclienttest.ReadOnlyKey, 12, 4)
	})
}

func wantNodesNull(t *testing.T, e *env, key string, n, calls int) {
	t.Helper()
	var ids []string
	want := "["
	for i := range n {
		ids = append(ids, fmt.Sprintf("6f1c1c1e-0000-4000-8000-0000000a%04d", i))
		if i > 0 {
			want += ","
		}
		want += "null"
	}
	want = `{"nodes":` + want + "]}"
	r := e.do(key, nodesQuery, map[string]any{"ids": ids})
	if len(r.errs) > 0 {
		t.Fatalf("%d errors, first %v at %v (%v), want none: %d lookups fit the budget (spent %d)", len(r.errs), r.errs[0], r.errs[0].Path, r.errs[0].Extensions, calls, r.calls)
	}
	if string(r.data) != want {
		t.Errorf("data = %s, want %s", r.data, want)
	}
	wantCalls(t, r, calls)
}
