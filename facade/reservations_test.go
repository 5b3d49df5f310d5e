package facade_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"suregql/facade"
	"suregql/restclienttest"
)

// One page of 100 roots of the large family with their subcategories costs
// the family's 50 pages, and one chats field beside it one call more: 51
// of a budget of 100 (the default), or the tree alone of 99. The family's
// pages are reserved once, as one round of paging.Load, so both answer
// whole (they were refused when the family read reserved its pages and
// Load reserved them again).
func TestReservations_FamilyReadIsReservedOnce(t *testing.T) {
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

// Two node fields of unknown ids of a large family (its size known from
// an earlier operation, so category ids are looked up one GET each) each
// reserve their three lookups: 6 of a budget of 6. The by-id batcher plans
// both category lookups on the first field's context, so that field's
// reservation pays for the other's lookup; its own last lookup may then
// use what the budget has left (the other field's reservation frees the
// call it did not spend), and both answer null in 6 calls.
func TestReservations_ABatchMayDoAnotherFieldsWork(t *testing.T) {
	e := newEnv(t, withConfig(func(c *facade.Config) { c.MaxUpstreamCalls = 6 }))
	key := restclienttest.LargeFamilyKey
	// Reads the family's first page: its size (5,000) is remembered.
	e.do(key, `{ a: node(id: "6f1c1c1e-0000-4000-8000-000000000fff") { id } b: node(id: "6f1c1c1e-0000-4000-8000-000000001fff") { id } }`, nil)
	for round := range 5 {
		q := fmt.Sprintf(`{ a: node(id: "6f1c1c1e-0000-4000-8000-0000000%05d") { id } b: node(id: "6f1c1c1e-0000-4000-8000-0000001%05d") { id } }`, round, round)
		r := e.do(key, q, nil)
		if len(r.errs) > 0 {
			t.Fatalf("round %d: errors %v at %v (%v), want none: both fields need 3 calls each, 6 of 6 (spent %d)", round, r.errs, r.errs[0].Path, r.errs[0].Extensions, r.calls)
		}
		wantCalls(t, r, 6)
	}
}

// nodes(ids:) of two unknown ids of the (small) demo family plans 5
// lookups: the family's first page for both category probes, and a chat
// and an import lookup each. At a budget of exactly 5, Nodes reserves all
// 5; the by-id planner's Affordable(1) before reading the family's first
// page counts that reservation as its own, so the page is read (not one
// GET per id) and both ids answer null in 5 calls.
func TestReservations_AffordableWithinAReservationCountsItsOwnCalls(t *testing.T) {
	t.Run("budget 5, two ids", func(t *testing.T) {
		e := newEnv(t, withConfig(func(c *facade.Config) { c.MaxUpstreamCalls = 5 }))
		wantNodesNull(t, e, restclienttest.DemoKey, 2, 5)
	})
	// The production default (100) with a standard key (100 calls an
	// hour): a budget of 25, and 12 unknown ids plan 1+12+12 = 25 lookups.
	t.Run("default budget, standard key, twelve ids", func(t *testing.T) {
		e := newEnv(t, withConfig(func(c *facade.Config) { c.MaxUpstreamCalls = facade.DefaultMaxUpstreamCalls }))
		wantNodesNull(t, e, restclienttest.ReadOnlyKey, 12, 25)
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
