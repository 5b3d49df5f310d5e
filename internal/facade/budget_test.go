package facade_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/state/restcache"
)

const treeQuery = `{ categories(rootsOnly: true, first: 100) { nodes { name subcategories(first: 50) { nodes { name parent { name color } } } } } }`

// wantTree checks a tree answer against the seed: every root, in order,
// with its subcategories in order and their parent's color.
func wantTree(t *testing.T, e *env, key string, roots []categoryNode) {
	t.Helper()
	wantSubtrees(t, e, key, roots)
	var rootNames []string
	for _, c := range e.upstream.Categories(key) {
		if c.ParentID == "" {
			rootNames = append(rootNames, c.Name)
		}
	}
	if got, want := names(roots), rootNames[:len(roots)]; !slices.Equal(got, want) {
		t.Fatalf("roots = %v, want %v", got, want)
	}
}

// wantSubtrees checks the subcategories of each root against the seed.
func wantSubtrees(t *testing.T, e *env, key string, roots []categoryNode) {
	t.Helper()
	all := e.upstream.Categories(key)
	byID := map[string]restclienttest.Category{}
	for _, c := range all {
		byID[c.ID] = c
	}
	children := map[string][]string{}
	for _, c := range all {
		if c.ParentID == "" {
			continue
		}
		parent := byID[c.ParentID].Name
		children[parent] = append(children[parent], c.Name)
	}
	for _, r := range roots {
		if r.Subcategories == nil {
			t.Errorf("%s: subcategories is null", r.Name)
			continue
		}
		if got, want := names(r.Subcategories.Nodes), children[r.Name]; !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Errorf("%s: subcategories = %v, want %v", r.Name, got, want)
		}
		root, _ := e.upstream.CategoryByName(key, r.Name)
		for _, s := range r.Subcategories.Nodes {
			if s.Parent == nil || s.Parent.Name != r.Name || s.Parent.Color != root.Color {
				t.Errorf("%s: parent = %+v, want %s %s", s.Name, s.Parent, r.Name, root.Color)
			}
		}
	}
}

func TestBudget_DefaultTreeInOneCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var out struct{ Categories categoryConn }
	r := e.ok(restclienttest.DemoKey, treeQuery, nil, &out)
	wantCalls(t, r, 1)
	wantTree(t, e, restclienttest.DemoKey, out.Categories.Nodes)

	// The same tree twice under aliases costs the same.
	twice := `{ a: categories(rootsOnly: true, first: 100) { nodes { name subcategories(first: 50) { nodes { name parent { name color } } } } }
	            b: categories(rootsOnly: true, first: 100) { nodes { name subcategories(first: 50) { nodes { name parent { name color } } } } } }`
	var both struct{ A, B categoryConn }
	r = e.ok(restclienttest.DemoKey, twice, nil, &both)
	wantCalls(t, r, 1)
	wantTree(t, e, restclienttest.DemoKey, both.B.Nodes)
}

// Connection arguments on subcategories still work when the answer comes
// from memory, and its cursors are those of the upstream list.
func TestBudget_SubcategoryWindowsFromMemory(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	q := `{ categories(rootsOnly: true, first: 100) { nodes { name
		head: subcategories(first: 2) { totalCount nodes { name } pageInfo { hasNextPage hasPreviousPage endCursor } }
		tail: subcategories(last: 1) { nodes { name } pageInfo { hasNextPage hasPreviousPage } } } } }`
	type window struct {
		TotalCount int
		Nodes      []categoryNode
		PageInfo   pageInfo
	}
	var out struct {
		Categories struct {
			Nodes []struct {
				Name       string
				Head, Tail window
			}
		}
	}
	r := e.ok(restclienttest.DemoKey, q, nil, &out)
	wantCalls(t, r, 1)
	want := []string{"Gas & Fuel", "Parking", "Public Transit", "Rideshare"}
	for _, root := range out.Categories.Nodes {
		if root.Name != "Transportation" {
			continue
		}
		h, tl := root.Head, root.Tail
		if got := names(h.Nodes); h.TotalCount != 4 || !slices.Equal(got, want[:2]) || !h.PageInfo.HasNextPage || h.PageInfo.HasPreviousPage {
			t.Errorf("subcategories(first: 2) = %+v", h)
		}
		if got := names(tl.Nodes); !slices.Equal(got, want[3:]) || tl.PageInfo.HasNextPage || !tl.PageInfo.HasPreviousPage {
			t.Errorf("subcategories(last: 1) = %+v", tl)
		}
		// The cursor pages on through the upstream list of that parent.
		transport, _ := e.upstream.CategoryByName(restclienttest.DemoKey, "Transportation")
		var next struct{ Categories categoryConn }
		e.ok(restclienttest.DemoKey, categoriesPage, map[string]any{"parentId": transport.ID, "first": 5, "after": *h.PageInfo.EndCursor}, &next)
		if got := names(next.Categories.Nodes); !slices.Equal(got, want[2:]) {
			t.Errorf("after the in-memory window: %v, want %v", got, want[2:])
		}
		return
	}
	t.Fatal("no Transportation root")
}

func TestBudget_ParentsOfTwoChildrenShareOneCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, _ := e.upstream.CategoryByName(restclienttest.DemoKey, "Restaurants")
	b, _ := e.upstream.CategoryByName(restclienttest.DemoKey, "Coffee Shops")
	var out struct {
		A, B struct{ Parent struct{ Color string } }
	}
	r := e.ok(restclienttest.DemoKey, `query($a: ID!, $b: ID!) { a: category(id: $a) { parent { color } } b: category(id: $b) { parent { color } } }`,
		map[string]any{"a": a.ID, "b": b.ID}, &out)
	// At most 3 (A, B, their parent); the demo family fits one page, which
	// holds all three: 1.
	wantCalls(t, r, 1)
	food, _ := e.upstream.CategoryByName(restclienttest.DemoKey, "Food & Drink")
	if out.A.Parent.Color != food.Color || out.B.Parent.Color != food.Color {
		t.Errorf("parent colors = %q, %q, want %q", out.A.Parent.Color, out.B.Parent.Color, food.Color)
	}
}

// The parents of every subcategory of a list are answered together: one
// roots page, not one call per parent.
func TestBudget_ParentsOfAListAreBatched(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The demo family fits the list: its roots prime the parents.
	var out struct{ Categories categoryConn }
	r := e.ok(restclienttest.DemoKey, `{ categories(first: 100) { nodes { name parent { name color } } } }`, nil, &out)
	wantCalls(t, r, 1)
	checkParents := func(key string, nodes []categoryNode) {
		t.Helper()
		byID := map[string]restclienttest.Category{}
		for _, c := range e.upstream.Categories(key) {
			byID[c.ID] = c
		}
		for _, n := range nodes {
			c, _ := e.upstream.CategoryByName(key, n.Name)
			p, hasParent := byID[c.ParentID]
			if hasParent != (n.Parent != nil) || (hasParent && (n.Parent.Name != p.Name || n.Parent.Color != p.Color)) {
				t.Errorf("%s: parent = %+v, want %+v", n.Name, n.Parent, p)
			}
		}
	}
	checkParents(restclienttest.DemoKey, out.Categories.Nodes)

	// Three subcategories of three parents, fetched by id: the family's
	// first page answers all six (1 call, not 3 + 3).
	ids := map[string]any{}
	for i, name := range []string{"Restaurants", "Parking", "Pharmacy"} {
		c, _ := e.upstream.CategoryByName(restclienttest.DemoKey, name)
		ids[fmt.Sprintf("c%d", i)] = c.ID
	}
	var three map[string]categoryNode
	r = e.ok(restclienttest.DemoKey, `query($c0: ID!, $c1: ID!, $c2: ID!) {
		c0: category(id: $c0) { name parent { name color } }
		c1: category(id: $c1) { name parent { name color } }
		c2: category(id: $c2) { name parent { name color } } }`, ids, &three)
	wantCalls(t, r, 1)
	var nodes []categoryNode
	for _, n := range three {
		nodes = append(nodes, n)
	}
	checkParents(restclienttest.DemoKey, nodes)

	// In a family known to be larger than a page, the same lookups are sent
	// by id (3 categories + 3 parents), without a probing family page.
	key := restclienttest.LargeFamilyKey
	e.ok(key, `{ categories(first: 1) { nodes { name subcategories { totalCount } } } }`, nil, nil) // learns the family's size
	ids = map[string]any{}
	for i, name := range []string{"Root 0500 / Sub 01", "Root 0600 / Sub 02", "Root 0700 / Sub 03"} {
		c, ok := e.upstream.CategoryByName(key, name)
		if !ok {
			t.Fatalf("no %s in the large family", name)
		}
		ids[fmt.Sprintf("c%d", i)] = c.ID
	}
	three = nil
	r = e.ok(key, `query($c0: ID!, $c1: ID!, $c2: ID!) {
		c0: category(id: $c0) { name parent { name color } }
		c1: category(id: $c1) { name parent { name color } }
		c2: category(id: $c2) { name parent { name color } } }`, ids, &three)
	wantCalls(t, r, 6)
	nodes = nodes[:0]
	for _, n := range three {
		nodes = append(nodes, n)
	}
	checkParents(key, nodes)
}

func TestBudget_LargeFamilyPageOfRootsWithSubcategories(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.LargeFamilyKey
	var out struct{ Categories categoryConn }
	r := e.ok(key, treeQuery, nil, &out)
	if r.calls > 51 {
		t.Errorf("upstream calls = %d, want at most 1 + ceil(5000/100) = 51", r.calls)
	}
	t.Logf("one page of 100 roots with their subcategories: %d calls", r.calls)
	wantTree(t, e, key, out.Categories.Nodes)
}

func TestBudget_LargeFamilyWalkWithCache(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.CacheTTL = time.Minute }))
	key := restclienttest.LargeFamilyKey
	q := `query($after: String) { categories(rootsOnly: true, first: 100, after: $after) { nodes { name subcategories(first: 50) { nodes { name parent { name color } } } } pageInfo { hasNextPage endCursor } } }`
	var roots []categoryNode
	vars := map[string]any{}
	total := 0
	for page := 0; ; page++ {
		var out struct{ Categories categoryConn }
		r := e.ok(key, q, vars, &out)
		total += r.calls
		roots = append(roots, out.Categories.Nodes...)
		if !out.Categories.PageInfo.HasNextPage {
			break
		}
		vars["after"] = *out.Categories.PageInfo.EndCursor
	}
	if len(roots) != 1000 {
		t.Fatalf("walked %d roots, want 1000", len(roots))
	}
	if total > 60 {
		t.Errorf("walking 1,000 roots with their subcategories cost %d calls, want at most 60", total)
	}
	t.Logf("walking 10 pages of roots with the cache on: %d calls", total)
	wantTree(t, e, key, roots)
}

func TestBudget_GuardRefusesExpensiveBatches(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.MaxUpstreamCalls = 5 }))
	key := restclienttest.LargeFamilyKey
	r := e.do(key, treeQuery, nil)
	if r.calls > 5 {
		t.Errorf("upstream calls = %d, want at most 5", r.calls)
	}
	var out struct{ Categories categoryConn }
	if err := jsonUnmarshal(r.data, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Categories.Nodes) != 100 {
		t.Fatalf("got %d roots, want 100", len(out.Categories.Nodes))
	}
	refused := 0
	for _, err := range r.errs {
		if err.Extensions["code"] != "QUERY_TOO_EXPENSIVE" {
			t.Errorf("unexpected error %v", err)
			continue
		}
		if len(err.Path) < 4 || err.Path[3] != "subcategories" {
			t.Errorf("refused field %v, want a subcategories field", err.Path)
		}
		if err.Extensions["budget"] != float64(5) || err.Extensions["planned"].(float64) <= 0 {
			t.Errorf("extensions = %v, want budget 5 and the planned calls", err.Extensions)
		}
		refused++
	}
	// The batch is refused whole: the subcategories of every root that has
	// some (those without are known to be empty, at no cost).
	hasChildren := map[string]bool{}
	for _, c := range e.upstream.Categories(key) {
		if c.ParentID != "" {
			hasChildren[c.ParentID] = true
		}
	}
	withChildren := 0
	for _, root := range out.Categories.Nodes {
		c, _ := e.upstream.CategoryByName(key, root.Name)
		switch {
		case hasChildren[c.ID]:
			withChildren++
			if root.Subcategories != nil {
				t.Errorf("%s: subcategories answered, want refused with the batch", root.Name)
			}
		case root.Subcategories == nil || len(root.Subcategories.Nodes) != 0:
			t.Errorf("%s: subcategories = %+v, want an empty connection", root.Name, root.Subcategories)
		}
	}
	if refused != withChildren {
		t.Errorf("%d subcategories fields refused, want %d (every root with subcategories)", refused, withChildren)
	}
}

func TestBudget_FirstLevelOverBudgetIsRefusedBeforeAnyCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.MaxUpstreamCalls = 5 }))
	// Six imports by id: six calls before any nested field.
	var fields []string
	for i := range 6 {
		fields = append(fields, fmt.Sprintf(`i%d: import(id: "00000000-0000-4000-8000-00000000000%d") { id }`, i, i))
	}
	r := e.do(restclienttest.DemoKey, "{ "+strings.Join(fields, " ")+" }", nil)
	err := wantError(t, r, "QUERY_TOO_EXPENSIVE")
	wantCalls(t, r, 0)
	if err.Extensions["planned"] != float64(6) || err.Extensions["budget"] != float64(5) {
		t.Errorf("extensions = %v, want planned 6 and budget 5", err.Extensions)
	}
	if r.ext.Upstream.RateLimit != nil || !strings.Contains(string(r.rawExt), `"upstream":{"calls":0}`) {
		t.Errorf("extensions = %s on a refused operation, want upstream.calls 0", r.rawExt)
	}
}

// A window whose pages are known only after the first one is refused whole
// when the rest would pass the budget: the first page is the only call.
func TestBudget_PagesBeyondTheBudgetAreNotSent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.MaxUpstreamCalls = 3 }))
	r := e.do(restclienttest.LargeFamilyKey, `{ chats(first: 100) { totalCount } categories(first: 1) { totalCount } }`, nil)
	err := wantError(t, r, "QUERY_TOO_EXPENSIVE")
	if len(err.Path) != 1 || err.Path[0] != "chats" || err.Extensions["planned"] != float64(4) {
		t.Errorf("error at %v with %v, want chats refused with planned 4", err.Path, err.Extensions)
	}
	wantCalls(t, r, 2) // page 1 of the chats, and the categories
	var out struct {
		Chats      *chatConn
		Categories *categoryConn
	}
	if err := jsonUnmarshal(r.data, &out); err != nil {
		t.Fatal(err)
	}
	if out.Chats != nil || out.Categories == nil || out.Categories.TotalCount != 5000 {
		t.Errorf("data = %s, want chats null and the categories answered", r.data)
	}
}

func TestBudget_CoalescesConcurrentIdenticalOperations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		keys      []string
		wantCalls int
	}{
		{"one key", []string{restclienttest.DemoKey}, 1},
		{"two keys share nothing", []string{restclienttest.DemoKey, restclienttest.OtherFamilyKey}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			co := &restcache.Coalescer{}
			e := newEnv(t, withConfig(func(c *facade.Config) { c.Coalescer = co }))
			want := map[string][]string{}
			for _, k := range tc.keys {
				want[k] = seedNames(e.upstream.Categories(k))[:3]
			}
			release := e.upstream.Hold()
			defer release()
			const ops = 50
			var wg sync.WaitGroup
			for i := range ops {
				key := tc.keys[i%len(tc.keys)]
				// Each text differs (a comment), so each operation runs
				// and reaches the coalescer: identical texts of a key would
				// share one execution before any GET.
				query := fmt.Sprintf("{ categories(first: 3) { nodes { name } } } # operation %d", i)
				wg.Go(func() {
					data, _, err := e.client(key).ExecRawWithExtensions(t.Context(), query, nil)
					if err != nil {
						t.Error(err)
						return
					}
					var out struct{ Categories categoryConn }
					if err := jsonUnmarshal(data, &out); err != nil {
						t.Error(err)
						return
					}
					if got := names(out.Categories.Nodes); !slices.Equal(got, want[key]) {
						t.Errorf("%s got %v, want %v", key, got, want[key])
					}
				})
			}
			// Release the upstream once every operation waits on a call.
			for deadline := time.Now().Add(10 * time.Second); ; {
				if _, _, waiting := co.Stats(); waiting == ops {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("operations did not reach the upstream")
				}
				time.Sleep(time.Millisecond)
			}
			release()
			wg.Wait()
			if got := e.upstream.Calls(); got != tc.wantCalls {
				t.Errorf("upstream calls = %d for %d identical operations, want %d", got, ops, tc.wantCalls)
			}
			for _, k := range tc.keys {
				if got := e.upstream.CallsFor(k); got != 1 {
					t.Errorf("calls for %s = %d, want 1", k, got)
				}
			}
		})
	}
}

func TestBudget_CacheServesRepeatsAndSeesOwnWrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.CacheTTL = time.Minute }))
	key := restclienttest.DemoKey
	var first struct{ Chats chatConn }
	r := e.ok(key, chatsPage, map[string]any{"first": 5}, &first)
	wantCalls(t, r, 1)
	r = e.ok(key, chatsPage, map[string]any{"first": 5}, &first)
	wantCalls(t, r, 0)

	// Another key's identical query is not served from this key's cache.
	r = e.ok(restclienttest.OtherFamilyKey, chatsPage, map[string]any{"first": 5}, nil)
	wantCalls(t, r, 1)

	id := first.Chats.Nodes[0].ID
	e.ok(key, `mutation($id: ID!) { updateChat(input: {id: $id, title: "Renamed"}) { chat { title } } }`, map[string]any{"id": id}, nil)
	var after struct{ Chats chatConn }
	r = e.ok(key, chatsPage, map[string]any{"first": 5}, &after)
	wantCalls(t, r, 1)
	if after.Chats.Nodes[0].Title != "Renamed" {
		t.Errorf("title after rename = %q, want Renamed", after.Chats.Nodes[0].Title)
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	q := `{ rateLimit { limit remaining used resetAt } }`
	var out struct {
		RateLimit struct {
			Limit, Remaining, Used int
			ResetAt                string
		}
	}
	r := e.ok(restclienttest.ReadOnlyKey, q, nil, &out)
	wantCalls(t, r, 1) // nothing seen yet for this key: the cheapest call
	if out.RateLimit.Limit != 100 || out.RateLimit.Used != 1 || out.RateLimit.Remaining != 99 {
		t.Errorf("rateLimit = %+v, want limit 100, used 1, remaining 99", out.RateLimit)
	}
	r = e.ok(restclienttest.ReadOnlyKey, q, nil, &out)
	wantCalls(t, r, 0)

	// Every response reports the last rate limit seen for the key.
	r = e.ok(restclienttest.ReadOnlyKey, `{ categories(first: 1) { totalCount } }`, nil, nil)
	if rl := r.ext.Upstream.RateLimit; rl == nil || rl.Limit != 100 || rl.Remaining != 98 || !strings.HasPrefix(rl.ResetAt, "20") {
		t.Errorf("extensions.upstream.rateLimit = %+v, want limit 100, remaining 98", rl)
	}
}

// Found in review: the first page the look-ahead reads answers the first
// roots' subcategories even once the family is known to be large.
func TestBudget_FirstRootsOfALargeFamily(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.LargeFamilyKey
	q := `{ categories(rootsOnly: true, first: 10) { nodes { name subcategories { nodes { name parent { name color } } } } } }`
	for run := range 2 { // the second run knows the family's size
		var out struct{ Categories categoryConn }
		r := e.ok(key, q, nil, &out)
		if r.calls > 2 {
			t.Errorf("run %d: %d calls, want at most 2 (the family's first page and the roots)", run, r.calls)
		}
		wantTree(t, e, key, out.Categories.Nodes)
	}
}

// An empty window of roots costs one call, also when its selection wants
// subcategories: the one that tells the roots' current length (a page of the
// roots, or the family's first page, which holds the whole demo family), and
// nothing for the subcategories of no root. A cursor tells no length, so even
// the window after the last root needs that call; it cost none when cursors
// carried the length, which let a kept or edited cursor set totalCount.
func TestBudget_EmptyTreeWindowCostsOneCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.DemoKey
	roots := 0
	for _, c := range e.upstream.Categories(key) {
		if c.ParentID == "" {
			roots++
		}
	}
	var out struct{ Categories categoryConn }
	e.ok(key, `{ categories(rootsOnly: true, last: 1) { pageInfo { endCursor } } }`, nil, &out)
	const q = `query($first: Int, $after: String) { categories(rootsOnly: true, first: $first, after: $after) {
		totalCount nodes { subcategories { nodes { name } } } pageInfo { hasNextPage hasPreviousPage } } }`
	for _, tc := range []struct {
		name     string
		vars     map[string]any
		wantPrev bool
	}{
		{"after the last root", map[string]any{"first": 10, "after": *out.Categories.PageInfo.EndCursor}, true},
		{"first 0", map[string]any{"first": 0}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got struct{ Categories categoryConn }
			r := e.ok(key, q, tc.vars, &got)
			wantCalls(t, r, 1)
			c := got.Categories
			if len(c.Nodes) != 0 || c.TotalCount != roots || c.PageInfo.HasNextPage != !tc.wantPrev || c.PageInfo.HasPreviousPage != tc.wantPrev {
				t.Errorf("%d nodes, totalCount %d, pageInfo %+v; want none of %d, hasPreviousPage %v", len(c.Nodes), c.TotalCount, c.PageInfo, roots, tc.wantPrev)
			}
		})
	}
}

// The same operation on the same data gets the same plan: the
// subcategories of a page are planned together, whatever the scheduling.
func TestBudget_PlansAreDeterministic(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.MaxUpstreamCalls = 20 }))
	q := `{ categories(rootsOnly: true, first: 40) { nodes { subcategories(first: 50) { totalCount } } } }`
	var first string
	for run := range 6 {
		r := e.do(restclienttest.LargeFamilyKey, q, nil)
		refused := 0
		for _, err := range r.errs {
			if err.Extensions["code"] == "QUERY_TOO_EXPENSIVE" {
				refused++
			}
		}
		got := fmt.Sprintf("calls %d, refused %d, data %s", r.calls, refused, r.data)
		if run == 0 {
			first = got
			continue
		}
		if got != first {
			t.Fatalf("run %d differs:\n%s\nwant\n%s", run, got, first)
		}
	}
}

func TestBudget_LookupsByID(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.MaxUpstreamCalls = 5 }))
	// Six categories by id: the family's first page answers all of them, so
	// the budget of 5 is no reason to refuse.
	var fields []string
	for i, c := range e.upstream.Categories(restclienttest.DemoKey)[:6] {
		fields = append(fields, fmt.Sprintf(`c%d: category(id: %q) { name }`, i, c.ID))
	}
	r := e.ok(restclienttest.DemoKey, "{ "+strings.Join(fields, " ")+" }", nil, nil)
	wantCalls(t, r, 1)

	// Ids the complete first page does not hold are not found, without a
	// call each.
	r = e.do(restclienttest.DemoKey, `{ a: category(id: "00000000-0000-4000-8000-000000000001") { name } b: category(id: "00000000-0000-4000-8000-000000000002") { name } }`, nil)
	wantCalls(t, r, 1)
	if len(r.errs) != 2 || r.errs[0].Extensions["code"] != "NOT_FOUND" || r.errs[1].Extensions["code"] != "NOT_FOUND" {
		t.Errorf("errors = %v, want two NOT_FOUND", r.errs)
	}
}

// A short list asked for a long window costs its own pages, not the
// window's: the first page tells the list's length.
func TestBudget_ShortListLongWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var out struct{ Chats chatConn }
	r := e.ok(restclienttest.DemoKey, `{ chats(first: 100) { totalCount nodes { title } } }`, nil, &out)
	wantCalls(t, r, 1)
	if want := seedChatTitles(e.upstream.Chats(restclienttest.DemoKey)); !slices.Equal(chatTitles(out.Chats.Nodes), want) {
		t.Errorf("chats = %v, want %v", chatTitles(out.Chats.Nodes), want)
	}
}
