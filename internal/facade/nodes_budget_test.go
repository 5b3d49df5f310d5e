package facade_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// Node lookups that pay for themselves (issue 17, item 3), end to end with
// the production budget (-max-upstream-calls 100): a standard key's
// operation may spend 25 calls.

// withDefaultBudget is the production cap on one operation's calls.
func withDefaultBudget() envOption {
	return withConfig(func(c *facade.Config) { c.MaxUpstreamCalls = facade.DefaultMaxUpstreamCalls })
}

// neverSeen returns n valid UUIDs that name nothing, distinct per prefix.
func neverSeen(prefix, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("6f1c1c1e-0000-4000-8000-%04x%08x", prefix, i)
	}
	return ids
}

// aliasedNodes is an operation of one node field per id (n0, n1, …)
// selecting sel, after the root fields in before.
func aliasedNodes(ids []string, sel, before string) string {
	var b strings.Builder
	b.WriteString("{ " + before)
	for i, id := range ids {
		fmt.Fprintf(&b, " n%d: node(id: %q) { ...S }", i, id)
	}
	b.WriteString(" } fragment S on Node { " + sel + " }")
	return b.String()
}

// The selections of the aliased node fields: one an element of the chat
// and import lists answers, one that needs each object's show.
const (
	listedSelection = `__typename id ... on Category { name } ... on Chat { title } ... on Import { status }`
	shownSelection  = `__typename id ... on Chat { messages(first: 1) { totalCount } } ... on Import { configuration { dateFormat } }`
)

// wholeOrRefused checks an operation of aliased node fields of ids that
// name nothing: answered whole (every field null, no error) within the
// budget, or refused whole (every field QUERY_TOO_EXPENSIVE) at no call;
// never calls spent and fields refused. It reports whether it was
// answered.
func wholeOrRefused(t *testing.T, r result, fields, budget int) bool {
	t.Helper()
	var data map[string]*nodeAnswer
	if err := json.Unmarshal(r.data, &data); err != nil {
		t.Fatalf("decode %s: %v", r.data, err)
	}
	for alias, n := range data {
		if n != nil {
			t.Errorf("%s = %+v, want null", alias, n)
		}
	}
	refused := 0
	for _, err := range r.errs {
		if err.Extensions["code"] != "QUERY_TOO_EXPENSIVE" {
			t.Fatalf("error %v (%v), want only QUERY_TOO_EXPENSIVE", err, err.Extensions)
		}
		refused++
	}
	switch {
	case refused == 0 && r.calls <= budget:
		return true
	case refused == fields && r.calls == 0:
		return false
	}
	t.Errorf("%d of %d fields refused after %d upstream calls (budget %d): want all answered within the budget, or all refused at no call",
		refused, fields, r.calls, budget)
	return false
}

// Issue 17's row 3: 20 aliased node fields of never-seen ids on a standard
// key. Before: 18 calls, 12 fields QUERY_TOO_EXPENSIVE, nothing learnt.
// Now the fields are planned together: the family's first page proves no
// id is a category, the chat, import and account lists' first pages that
// none is a chat, an import or an account: 4 calls (one per kind), all
// null. Asked again, nothing is sent: the key was told they name nothing.
func TestNodesBudget_TwentyAliasedUnknownIDsOnAStandardKey(t *testing.T) {
	t.Parallel()
	for _, key := range []string{restclienttest.ReadOnlyKey, restclienttest.OtherFamilyKey} {
		t.Run(key, func(t *testing.T) {
			e := newEnv(t, withDefaultBudget())
			q := aliasedNodes(neverSeen(1, 20), listedSelection, "")
			r := e.do(key, q, nil)
			if !wholeOrRefused(t, r, 20, 25) {
				t.Fatalf("refused (%v), want answered: 4 calls plan them all", r.errs)
			}
			wantCalls(t, r, 4)
			r = e.do(key, q, nil)
			wholeOrRefused(t, r, 20, 25)
			wantCalls(t, r, 0)
		})
	}
}

// Whatever the number of aliased node fields of never-seen ids, and
// whether their selection needs each object's show (a chat's messages, an
// import's configuration: a show per id, which the lists cannot spare),
// the operation is answered whole within the budget or refused whole at
// no call.
func TestNodesBudget_AliasedNodesAreAnsweredWholeOrRefusedWhole(t *testing.T) {
	t.Parallel()
	for _, sel := range []string{listedSelection, shownSelection} {
		for _, fields := range []int{1, 5, 8, 12, 13, 20} { // 20 root fields at most
			t.Run(fmt.Sprintf("%d fields, %.12s", fields, sel), func(t *testing.T) {
				e := newEnv(t, withDefaultBudget())
				r := e.do(restclienttest.ReadOnlyKey, aliasedNodes(neverSeen(2, fields), sel, ""), nil)
				answered := wholeOrRefused(t, r, fields, 25)
				// With lists: 4 calls for any number. With shows: the
				// family's page and the account list (an account whole),
				// and a chat and an import show each, 2+2n, within 25 up
				// to 11 fields.
				want := sel == listedSelection || 2+2*fields <= 25
				if answered != want {
					t.Errorf("answered = %v after %d calls, want %v", answered, r.calls, want)
				}
			})
		}
	}
}

// A refused plan holds nothing back: the node fields it refused (19 of
// them reading each object's show: 1+2×19 = 39 calls of 25) are refused
// at no call, and another root field of the operation is answered.
func TestNodesBudget_RefusedNodesLeaveTheBudgetToOthers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withDefaultBudget())
	q := aliasedNodes(neverSeen(3, 19), shownSelection, "chats(first: 1) { totalCount }")
	r := e.do(restclienttest.ReadOnlyKey, q, nil)
	var out struct{ Chats *chatConn }
	if err := json.Unmarshal(r.data, &out); err != nil {
		t.Fatal(err)
	}
	if out.Chats == nil {
		t.Errorf("chats = null, want its answer beside the refused node fields")
	}
	if len(r.errs) != 19 {
		t.Errorf("%d errors (%v), want the 19 node fields refused", len(r.errs), r.errs)
	}
	wantCalls(t, r, 1) // the chat list only
}

// Repeated lookups of ids the key knows cost 0–1 calls each: a category
// one (the family's first page; 0 with a cached answer), a chat or an
// import one show, and a nodes(ids:) of many known ids a page per kind,
// the same every time.
func TestNodesBudget_KnownIDsCostAtMostOneCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withDefaultBudget())
	key := restclienttest.ReadOnlyKey
	cats := e.upstream.Categories(key)
	chats := e.upstream.Chats(key)
	imports := e.upstream.ImportIDs(key)

	// A category of the key's family, never handed to it: its family's
	// first page finds it, with no chat or import lookup (3 before).
	for round := range 3 {
		got, r := node(t, e, key, cats[7].ID)
		wantCalls(t, r, 1)
		if got == nil || got.Typename != "Category" || got.Name != cats[7].Name {
			t.Fatalf("round %d: node = %+v, want category %q", round, got, cats[7].Name)
		}
	}
	// A chat and an import: found once (a family page and a show of each
	// kind), then one show.
	for _, id := range []string{chats[0].ID, imports[0]} {
		for round := range 3 {
			got, r := node(t, e, key, id)
			if round > 0 {
				wantCalls(t, r, 1)
			}
			if got == nil || got.ID != id {
				t.Fatalf("round %d: node(%s) = %+v, want it", round, id, got)
			}
		}
	}
	// Every category, chat and import of the key: a page of each kind
	// (accounts too: the chats never handed out may be accounts).
	var ids []string
	for _, c := range cats {
		ids = append(ids, c.ID)
	}
	for _, c := range chats {
		ids = append(ids, c.ID)
	}
	ids = append(ids, imports...)
	if len(ids) > 100 {
		ids = ids[:100]
	}
	for round := range 3 {
		var out struct{ Nodes []*nodeAnswer }
		r := e.ok(key, nodesQuery, map[string]any{"ids": ids}, &out)
		if r.calls > 4 {
			t.Errorf("round %d: nodes of %d known ids = %d calls, want at most 4", round, len(ids), r.calls)
		}
		for i, n := range out.Nodes {
			if n == nil || n.ID != ids[i] {
				t.Fatalf("round %d: nodes[%d] = %+v, want %s", round, i, n, ids[i])
			}
		}
	}
}

// With the answer cache on, a known id repeated costs nothing.
func TestNodesBudget_KnownIDsFromTheCacheCostNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withDefaultBudget(), withConfig(func(c *facade.Config) { c.CacheTTL = time.Minute }))
	key := restclienttest.ReadOnlyKey
	cat := e.upstream.Categories(key)[3]
	chat := e.upstream.Chats(key)[0]
	for _, id := range []string{cat.ID, chat.ID} {
		node(t, e, key, id)
		got, r := node(t, e, key, id)
		wantCalls(t, r, 0)
		if got == nil || got.ID != id {
			t.Errorf("node(%s) from the cache = %+v", id, got)
		}
	}
}

// Issue 17: nodes(ids:) of 100 known ids of the 5,000-category family cost
// 100 calls, and 100 again. Now its whole family (50 pages) answers them
// when it costs fewer calls than a show each, every time; with the answer
// cache, nothing the second time.
func TestNodesBudget_HundredKnownIDsOfALargeFamily(t *testing.T) {
	t.Parallel()
	for _, ttl := range []time.Duration{0, time.Minute} {
		t.Run(fmt.Sprint("cache ", ttl), func(t *testing.T) {
			e := newEnv(t, withDefaultBudget(), withConfig(func(c *facade.Config) { c.CacheTTL = ttl }))
			key := restclienttest.LargeFamilyKey
			cats := e.upstream.Categories(key)
			var ids []string
			for i := range 100 {
				ids = append(ids, cats[i*len(cats)/100].ID)
			}
			for round := range 3 {
				var out struct{ Nodes []*nodeAnswer }
				r := e.ok(key, nodesQuery, map[string]any{"ids": ids}, &out)
				switch {
				case r.calls > 50:
					t.Errorf("round %d: %d calls, want at most the family's 50 pages", round, r.calls)
				case round > 0 && ttl > 0 && r.calls != 0:
					t.Errorf("round %d: %d calls, want 0 from the cache", round, r.calls)
				}
				for i, n := range out.Nodes {
					if n == nil || n.ID != ids[i] || n.Typename != "Category" {
						t.Fatalf("round %d: nodes[%d] = %+v, want category %s", round, i, n, ids[i])
					}
				}
			}
		})
	}
}

// Issue 17: 35 never-seen ids were refused whole even for an unlimited key
// (35×3 = 105 lookups > -max-upstream-calls 100). Now the family's first
// page settles them as categories, and the chat, import and account lists
// (a page each for the demo key, 13, 2 and 1 for the large family's) as
// chats, imports and accounts: 4 calls, or 52 the first time the large
// family is seen (its category ids one show each, fewer than its 50
// pages), within the cap, even in the key's first operation.
func TestNodesBudget_ThirtyFiveNeverSeenIDsOnAnUnlimitedKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key      string
		maxCalls int
	}{
		{restclienttest.DemoKey, 4},
		{restclienttest.LargeFamilyKey, facade.DefaultMaxUpstreamCalls},
	} {
		t.Run(tc.key, func(t *testing.T) {
			e := newEnv(t, withDefaultBudget(), withUpstream(restclienttest.WithUnlimited()))
			for round := range 2 {
				ids := neverSeen(10+round, 35)
				var out struct{ Nodes []*nodeAnswer }
				r := e.ok(tc.key, nodesQuery, map[string]any{"ids": ids}, &out)
				if r.calls > tc.maxCalls {
					t.Errorf("round %d: %d calls, want at most %d", round, r.calls, tc.maxCalls)
				}
				if len(out.Nodes) != 35 {
					t.Fatalf("round %d: %d nodes, want 35", round, len(out.Nodes))
				}
				for i, n := range out.Nodes {
					if n != nil {
						t.Errorf("round %d: nodes[%d] = %+v, want null", round, i, n)
					}
				}
				t.Logf("round %d: %d calls", round, r.calls)
			}
		})
	}
}

// An id the key was told names nothing is null at no call the next time,
// for that key only; the key's writes forget it (what it creates might
// bear it), and so does a lookup that failed (nothing was told).
func TestNodesBudget_NotFoundIsRememberedPerKeyUntilItWrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withDefaultBudget())
	key := restclienttest.DemoKey
	id := neverSeen(20, 1)[0]
	ask := func(who string, want int) {
		t.Helper()
		got, r := node(t, e, who, id)
		if got != nil {
			t.Errorf("node = %+v, want null", got)
		}
		wantCalls(t, r, want)
	}
	ask(key, 4) // the family's page, a chat and an import show, the account list
	ask(key, 0)
	ask(restclienttest.ReadOnlyKey, 4) // another key was told nothing

	e.ok(key, `mutation { createChat(input: {title: "Rent"}) { chat { id } } }`, nil, nil)
	ask(key, 4)
	ask(key, 0)
	r := e.do(key, createCategory, map[string]any{"in": map[string]any{"name": "Node budget"}})
	if len(r.errs) > 0 {
		t.Fatalf("createCategory: %v", r.errs)
	}
	ask(key, 4)
	ask(key, 0)

	// A write the upstream refused (a read-only key) wrote nothing: what
	// that key was told stays.
	ask(restclienttest.ReadOnlyKey, 0)
	e.do(restclienttest.ReadOnlyKey, `mutation { createChat(input: {title: "Rent"}) { chat { id } } }`, nil)
	ask(restclienttest.ReadOnlyKey, 0)

	// A failed lookup tells nothing: asked again, the id is looked up.
	other := neverSeen(21, 1)[0]
	e.upstream.FailNext("/api/v1/imports", 2, 503, "text/html", "<html>unavailable</html>")
	r = e.do(key, nodeQuery, map[string]any{"id": other})
	wantError(t, r, "UPSTREAM_UNAVAILABLE")
	got, r := node(t, e, key, other)
	if got != nil || r.calls == 0 {
		t.Errorf("after a failure: node = %+v in %d calls, want null after its lookups", got, r.calls)
	}
}
