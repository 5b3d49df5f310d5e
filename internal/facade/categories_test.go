package facade_test

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/planning/paging"
)

type pageInfo struct {
	HasNextPage     bool    `json:"hasNextPage"`
	HasPreviousPage bool    `json:"hasPreviousPage"`
	StartCursor     *string `json:"startCursor"`
	EndCursor       *string `json:"endCursor"`
}

type categoryNode struct {
	ID                 string `json:"id"`
	Name               string `json:"name"`
	Classification     string `json:"classification"`
	Color              string `json:"color"`
	SubcategoriesCount int    `json:"subcategoriesCount"`
	Parent             *struct {
		ID    string `json:"id"`
		Name  string `json:"name"`
		Color string `json:"color"`
	} `json:"parent"`
	Subcategories *categoryConn `json:"subcategories"`
}

type categoryConn struct {
	TotalCount int            `json:"totalCount"`
	Nodes      []categoryNode `json:"nodes"`
	Edges      []struct {
		Cursor string `json:"cursor"`
	} `json:"edges"`
	PageInfo pageInfo `json:"pageInfo"`
}

func names(nodes []categoryNode) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}

func seedNames(cats []restclienttest.Category) []string {
	out := make([]string, len(cats))
	for i, c := range cats {
		out[i] = c.Name
	}
	return out
}

const categoriesPage = `query($first: Int, $after: String, $last: Int, $before: String, $rootsOnly: Boolean, $classification: CategoryClassification, $parentId: ID) {
  categories(first: $first, after: $after, last: $last, before: $before, rootsOnly: $rootsOnly, classification: $classification, parentId: $parentId) {
    totalCount
    nodes { id name classification subcategoriesCount }
    edges { cursor }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`

func TestCategories_FirstPageIsOneCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var out struct{ Categories categoryConn }
	r := e.ok(restclienttest.DemoKey, `{ categories(first: 10) { nodes { id name } } }`, nil, &out)
	wantCalls(t, r, 1)
	want := seedNames(e.upstream.Categories(restclienttest.DemoKey))[:10]
	if got := names(out.Categories.Nodes); !slices.Equal(got, want) {
		t.Errorf("names = %v, want %v", got, want)
	}
}

func TestCategories_Filters(t *testing.T) {
	t.Parallel()
	forEachVersion(t, testCategoriesFilters)
}

func testCategoriesFilters(t *testing.T, e *env, v restclienttest.Version) {
	all := e.upstream.Categories(restclienttest.DemoKey)
	var roots, income []string
	for _, c := range all {
		if c.ParentID == "" {
			roots = append(roots, c.Name)
		}
		if c.Classification == "income" {
			income = append(income, c.Name)
		}
	}
	food, ok := e.upstream.CategoryByName(restclienttest.DemoKey, "Food & Drink")
	if !ok {
		t.Fatal("seed has no Food & Drink")
	}
	var children []string
	for _, c := range all {
		if c.ParentID == food.ID {
			children = append(children, c.Name)
		}
	}
	tests := []struct {
		name string
		vars map[string]any
		want []string
	}{
		{"roots only", map[string]any{"first": 100, "rootsOnly": true}, roots},
		{"income", map[string]any{"first": 100, "classification": "INCOME"}, income},
		{"children of a parent", map[string]any{"first": 100, "parentId": food.ID}, children},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.vars["classification"] != nil && v == restclienttest.Today {
				// TestCategories_ClassificationOfTodaysSure.
				return
			}
			var out struct{ Categories categoryConn }
			r := e.ok(restclienttest.DemoKey, categoriesPage, tc.vars, &out)
			wantCalls(t, r, 1)
			if got := names(out.Categories.Nodes); !slices.Equal(got, tc.want) {
				t.Errorf("names = %v, want %v", got, tc.want)
			}
			if out.Categories.TotalCount != len(tc.want) {
				t.Errorf("totalCount = %d, want %d", out.Categories.TotalCount, len(tc.want))
			}
		})
	}
}

// Categories lost their classification in Sure v0.6.9: the field is null,
// never a guess, and the filter (which today's server ignores, answering
// the whole family) is refused: after the one call that shows the server
// has none, at no call.
func TestCategories_ClassificationOfTodaysSure(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.DemoKey
	filtered := `query($c: CategoryClassification) { categories(first: 100, classification: $c) { totalCount nodes { name classification } } }`

	// Unknown yet: the call it costs is not taken for the filtered list.
	r := e.do(key, filtered, map[string]any{"c": "INCOME"})
	wantCalls(t, r, 1)
	got := wantError(t, r, "UNSUPPORTED_BY_UPSTREAM")
	if !strings.Contains(got.Message, "classification") || !strings.Contains(got.Message, "version") {
		t.Errorf("message %q: want it to say the server's version has no classification", got.Message)
	}
	if string(r.data) != `{"categories":null}` {
		t.Errorf("data = %s, want the field null", r.data)
	}

	// Known now: refused before any call, for every key of this upstream.
	for _, k := range []string{key, restclienttest.OtherFamilyKey} {
		r = e.do(k, filtered, map[string]any{"c": "EXPENSE"})
		wantCalls(t, r, 0)
		wantError(t, r, "UNSUPPORTED_BY_UPSTREAM")
	}

	// The categories themselves: classification null, nothing invented.
	var out struct{ Categories categoryConn }
	e.ok(key, `{ categories(first: 100) { totalCount nodes { name classification } } }`, nil, &out)
	if len(out.Categories.Nodes) == 0 {
		t.Fatal("no categories")
	}
	for _, c := range out.Categories.Nodes {
		if c.Classification != "" {
			t.Errorf("%s: classification %q, want null", c.Name, c.Classification)
		}
	}

	// A server seen first without a filter is known at no call too.
	fresh := newEnv(t)
	fresh.ok(key, `{ categories(first: 1) { nodes { id } } }`, nil, nil)
	wantCalls(t, fresh.do(key, filtered, map[string]any{"c": "INCOME"}), 0)
}

// A first: 30 window at offset 45 fits page 2 of 38 (offsets 38..75): one call.
func TestCategories_WindowFitsOnePage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.LargeFamilyKey
	all := seedNames(e.upstream.Categories(key))
	after := paging.EncodeCursor("categories?classification=&roots_only=false&parent_id=", 44)
	var out struct{ Categories categoryConn }
	r := e.ok(key, categoriesPage, map[string]any{"first": 30, "after": after}, &out)
	wantCalls(t, r, 1)
	if got := names(out.Categories.Nodes); !slices.Equal(got, all[45:75]) {
		t.Errorf("names = %v, want %v", got, all[45:75])
	}
	if pi := out.Categories.PageInfo; !pi.HasNextPage || !pi.HasPreviousPage {
		t.Errorf("pageInfo = %+v, want next and previous pages", pi)
	}
}

// Walking the whole large family forward then backward through cursors
// visits every category once, in order, across upstream page boundaries.
func TestCategories_PagingForwardAndBackward(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.LargeFamilyKey
	want := seedNames(e.upstream.Categories(key))[:230]
	vars := map[string]any{"first": 40, "rootsOnly": false}

	var forward []string
	var cursor *string
	for len(forward) < len(want) {
		if cursor != nil {
			vars["after"] = *cursor
		}
		var out struct{ Categories categoryConn }
		r := e.ok(key, categoriesPage, vars, &out)
		if r.calls > 2 {
			t.Fatalf("a 40-item page cost %d calls, want at most 2", r.calls)
		}
		forward = append(forward, names(out.Categories.Nodes)...)
		if out.Categories.PageInfo.HasPreviousPage != (cursor != nil) {
			t.Errorf("hasPreviousPage = %v on page after %v", out.Categories.PageInfo.HasPreviousPage, cursor)
		}
		cursor = out.Categories.PageInfo.EndCursor
	}
	if got := forward[:len(want)]; !slices.Equal(got, want) {
		t.Fatalf("forward walk differs from the upstream order\n got %v\nwant %v", got, want)
	}

	// Backward from the 230th item.
	var backward []string
	before := *cursor
	for {
		var out struct{ Categories categoryConn }
		e.ok(key, categoriesPage, map[string]any{"last": 33, "before": before}, &out)
		backward = append(names(out.Categories.Nodes), backward...)
		if !out.Categories.PageInfo.HasPreviousPage {
			break
		}
		before = *out.Categories.PageInfo.StartCursor
	}
	all := seedNames(e.upstream.Categories(key))
	if !slices.Equal(backward, all[:len(forward)-1]) {
		t.Fatalf("backward walk has %d items, want the %d before the cursor", len(backward), len(forward)-1)
	}
}

func TestCategories_LastWithoutBeforeUsesOverflowPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	all := seedNames(e.upstream.Categories(restclienttest.DemoKey))
	var out struct{ Categories categoryConn }
	r := e.ok(restclienttest.DemoKey, categoriesPage, map[string]any{"last": 3}, &out)
	wantCalls(t, r, 1)
	if got, want := names(out.Categories.Nodes), all[len(all)-3:]; !slices.Equal(got, want) {
		t.Errorf("names = %v, want %v", got, want)
	}
	if pi := out.Categories.PageInfo; pi.HasNextPage || !pi.HasPreviousPage {
		t.Errorf("pageInfo = %+v, want previous but no next page", pi)
	}
}

// A cursor at the last item, or made when the list was longer, points at or
// past today's end: the upstream answers an overflowing page with its last
// page, which must not be shown as the window.
func TestCategories_OverflowPageIsNotDuplicated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.LargeFamilyKey
	total := len(e.upstream.Categories(key))
	for _, off := range []int{total - 1, total + 29} {
		stale := paging.EncodeCursor("categories?classification=&roots_only=false&parent_id=", off)
		var out struct{ Categories categoryConn }
		r := e.ok(key, categoriesPage, map[string]any{"first": 20, "after": stale}, &out)
		wantCalls(t, r, 1)
		if len(out.Categories.Nodes) != 0 || out.Categories.PageInfo.HasNextPage || !out.Categories.PageInfo.HasPreviousPage {
			t.Errorf("after offset %d: got %d nodes, pageInfo %+v past the end; want none, previous but no next page",
				off, len(out.Categories.Nodes), out.Categories.PageInfo)
		}
		if out.Categories.TotalCount != total {
			t.Errorf("after offset %d: totalCount = %d, want %d", off, out.Categories.TotalCount, total)
		}
	}
}

// After the last item the window is empty, but the cursor does not say the
// list still ends there: the one call tells today's length.
func TestCategories_AfterLastItemCostsOneCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var out struct{ Categories categoryConn }
	e.ok(restclienttest.DemoKey, categoriesPage, map[string]any{"first": 100}, &out)
	end := out.Categories.PageInfo.EndCursor
	if out.Categories.PageInfo.HasNextPage || end == nil {
		t.Fatalf("first: 100 should hold the whole demo family, pageInfo %+v", out.Categories.PageInfo)
	}
	var next struct{ Categories categoryConn }
	r := e.ok(restclienttest.DemoKey, categoriesPage, map[string]any{"first": 10, "after": *end}, &next)
	wantCalls(t, r, 1)
	if len(next.Categories.Nodes) != 0 || next.Categories.TotalCount != out.Categories.TotalCount {
		t.Errorf("got %d nodes, totalCount %d; want 0 and %d", len(next.Categories.Nodes), next.Categories.TotalCount, out.Categories.TotalCount)
	}
	if pi := next.Categories.PageInfo; pi.HasNextPage || !pi.HasPreviousPage {
		t.Errorf("pageInfo = %+v, want previous but no next page", pi)
	}
}

// editCursor rewrites the position of a cursor the facade returned, as a
// client that decodes it would: the list tag is kept, the offset replaced,
// extra fields appended. The result may or may not be a valid cursor.
func editCursor(t *testing.T, cursor, version, offset string, extra ...string) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		t.Fatalf("cursor %q is not base64url: %v", cursor, err)
	}
	// Every version starts with version:tag:offset (c3 goes on with the
	// list's length and the item).
	parts := strings.Split(string(raw), ":")
	if len(parts) < 3 {
		t.Fatalf("cursor text %q has %d fields, want at least 3 (version, list, offset)", raw, len(parts))
	}
	return base64.RawURLEncoding.EncodeToString([]byte(strings.Join(append([]string{version, parts[1], offset}, extra...), ":")))
}

// A client that edits a cursor chooses the window's position, never the
// list's length: totalCount and hasNextPage stay those of the upstream, and
// a cursor of the old format, which carried a length, is refused.
func TestCategories_EditedCursorCannotSetTotalCount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.DemoKey
	all := seedNames(e.upstream.Categories(key))
	var out struct{ Categories categoryConn }
	e.ok(key, categoriesPage, map[string]any{"first": 2}, &out)
	genuine := *out.Categories.PageInfo.EndCursor
	for _, off := range []int{0, len(all) - 2, len(all) - 1, len(all), 4999, 1<<30 - 1} {
		var next struct{ Categories categoryConn }
		r := e.ok(key, categoriesPage, map[string]any{"first": 3, "after": editCursor(t, genuine, "c2", strconv.Itoa(off))}, &next)
		wantCalls(t, r, 1)
		from := min(off+1, len(all))
		want := all[from:min(from+3, len(all))]
		c := next.Categories
		if got := names(c.Nodes); !slices.Equal(got, want) {
			t.Errorf("after edited offset %d: names %v, want %v", off, got, want)
		}
		if c.TotalCount != len(all) || c.PageInfo.HasNextPage != (from+3 < len(all)) || !c.PageInfo.HasPreviousPage {
			t.Errorf("after edited offset %d: totalCount %d, pageInfo %+v; want %d, hasNextPage %v, hasPreviousPage",
				off, c.TotalCount, c.PageInfo, len(all), from+3 < len(all))
		}
	}
	for name, forged := range map[string]string{
		"c1 claiming 1000 items":     editCursor(t, genuine, "c1", "1", "1000"),
		"c1 claiming the list ended": editCursor(t, genuine, "c1", "1", "2"),
		"c2 with a length appended":  editCursor(t, genuine, "c2", "1", "1000"),
	} {
		t.Run(name, func(t *testing.T) {
			r := e.do(key, categoriesPage, map[string]any{"first": 3, "after": forged})
			wantError(t, r, "BAD_USER_INPUT")
			wantCalls(t, r, 0)
		})
	}
}

// Subcategories know their length from this operation's own answer
// (subcategories_count): a window after the last one, or after a cursor
// edited past the end, costs no call and keeps that length.
func TestCategory_SubcategoriesAfterTheLastCostNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.DemoKey
	food, _ := e.upstream.CategoryByName(key, "Food & Drink")
	q := `query($id: ID!, $first: Int, $after: String) { category(id: $id) { subcategoriesCount
		subcategories(first: $first, after: $after) { totalCount nodes { name } pageInfo { hasNextPage hasPreviousPage endCursor } } } }`
	var out struct{ Category categoryNode }
	e.ok(key, q, map[string]any{"id": food.ID, "first": 100}, &out)
	subs := out.Category.Subcategories
	if subs == nil || len(subs.Nodes) == 0 || subs.TotalCount != out.Category.SubcategoriesCount || subs.PageInfo.EndCursor == nil {
		t.Fatalf("subcategories = %+v, want all %d of Food & Drink", subs, out.Category.SubcategoriesCount)
	}
	n := subs.TotalCount
	for _, after := range []string{*subs.PageInfo.EndCursor, editCursor(t, *subs.PageInfo.EndCursor, "c2", "500")} {
		var next struct{ Category categoryNode }
		r := e.ok(key, q, map[string]any{"id": food.ID, "first": 10, "after": after}, &next)
		wantCalls(t, r, 1) // the category itself; the window after it is empty by subcategories_count
		s := next.Category.Subcategories
		if s == nil || len(s.Nodes) != 0 || s.TotalCount != n || s.PageInfo.HasNextPage || !s.PageInfo.HasPreviousPage {
			t.Errorf("subcategories after the last = %+v, want none of %d, previous but no next page", s, n)
		}
	}
}

func TestCategories_CursorOfAnotherFilterIsRejected(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var out struct{ Categories categoryConn }
	e.ok(restclienttest.DemoKey, categoriesPage, map[string]any{"first": 2, "rootsOnly": true}, &out)
	r := e.do(restclienttest.DemoKey, categoriesPage, map[string]any{"first": 2, "after": *out.Categories.PageInfo.EndCursor, "classification": "EXPENSE"})
	wantError(t, r, "BAD_USER_INPUT")
	wantCalls(t, r, 0)
}

func TestCategories_BadArguments(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name string
		vars map[string]any
	}{
		{"first above 100", map[string]any{"first": 101}},
		{"negative last", map[string]any{"last": -1}},
		{"first and last", map[string]any{"first": 1, "last": 1}},
		{"junk cursor", map[string]any{"first": 1, "after": "not-a-cursor"}},
		{"parentId not a UUID", map[string]any{"parentId": "1 OR 1=1"}},
	}
	// The same arguments on a tree query, whose look-ahead would otherwise
	// read the family first.
	tree := `query($first: Int, $after: String, $last: Int, $before: String, $parentId: ID) {
		categories(first: $first, after: $after, last: $last, before: $before, parentId: $parentId) { nodes { subcategories { totalCount } } } }`
	for _, q := range []string{categoriesPage, tree} {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				r := e.do(restclienttest.DemoKey, q, tc.vars)
				wantError(t, r, "BAD_USER_INPUT")
				wantCalls(t, r, 0)
			})
		}
	}
}

func TestCategory_ByIDWithEmbeddedParent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	restaurants, ok := e.upstream.CategoryByName(restclienttest.DemoKey, "Restaurants")
	if !ok {
		t.Fatal("seed has no Restaurants")
	}
	food, _ := e.upstream.CategoryByName(restclienttest.DemoKey, "Food & Drink")
	var out struct{ Category categoryNode }
	r := e.ok(restclienttest.DemoKey, `query($id: ID!) { category(id: $id) { name parent { id name } } }`, map[string]any{"id": restaurants.ID}, &out)
	wantCalls(t, r, 1)
	if out.Category.Parent == nil || out.Category.Parent.ID != food.ID || out.Category.Parent.Name != food.Name {
		t.Errorf("parent = %+v, want %s", out.Category.Parent, food.Name)
	}

	// Any other parent field needs the parent itself: one more call.
	r = e.ok(restclienttest.DemoKey, `query($id: ID!) { category(id: $id) { parent { color } } }`, map[string]any{"id": restaurants.ID}, &out)
	wantCalls(t, r, 2)
	if out.Category.Parent == nil || out.Category.Parent.Color != food.Color {
		t.Errorf("parent = %+v, want color %s", out.Category.Parent, food.Color)
	}
}

func TestCategory_LeafSubcategoriesCostNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	restaurants, _ := e.upstream.CategoryByName(restclienttest.DemoKey, "Restaurants")
	var out struct{ Category categoryNode }
	r := e.ok(restclienttest.DemoKey, `query($id: ID!) { category(id: $id) { subcategoriesCount subcategories(first: 5) { totalCount nodes { id } pageInfo { hasNextPage } } } }`,
		map[string]any{"id": restaurants.ID}, &out)
	wantCalls(t, r, 1) // the category itself; its empty subcategories cost nothing
	if s := out.Category.Subcategories; s == nil || s.TotalCount != 0 || len(s.Nodes) != 0 {
		t.Errorf("subcategories = %+v, want an empty connection", s)
	}
}

func TestCategory_TreeOfRootsWithSubcategories(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	all := e.upstream.Categories(restclienttest.DemoKey)
	children := map[string][]string{}
	var roots []string
	for _, c := range all {
		if c.ParentID == "" {
			roots = append(roots, c.Name)
		} else {
			children[c.ParentID] = append(children[c.ParentID], c.Name)
		}
	}
	var out struct{ Categories categoryConn }
	e.ok(restclienttest.DemoKey, `{ categories(rootsOnly: true, first: 100) { nodes { id name subcategoriesCount subcategories(first: 50) { totalCount nodes { name parent { name } } } } } }`, nil, &out)
	if got := names(out.Categories.Nodes); !slices.Equal(got, roots) {
		t.Fatalf("roots = %v, want %v", got, roots)
	}
	for _, root := range out.Categories.Nodes {
		got := names(root.Subcategories.Nodes)
		if want := children[root.ID]; !slices.Equal(got, want) && (len(got) != 0 || len(want) != 0) {
			t.Errorf("subcategories of %s = %v, want %v", root.Name, got, want)
		}
		if root.Subcategories.TotalCount != root.SubcategoriesCount {
			t.Errorf("%s: totalCount %d, subcategoriesCount %d", root.Name, root.Subcategories.TotalCount, root.SubcategoriesCount)
		}
		for _, sub := range root.Subcategories.Nodes {
			if sub.Parent == nil || sub.Parent.Name != root.Name {
				t.Errorf("parent of %s = %+v, want %s", sub.Name, sub.Parent, root.Name)
			}
		}
	}
}

func TestCategory_NotFoundNullsOnlyThatField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := e.upstream.Categories(restclienttest.OtherFamilyKey)[0]
	var out struct {
		Missing *categoryNode
		List    categoryConn
	}
	r := e.do(restclienttest.DemoKey, `query($id: ID!) { missing: category(id: $id) { name } list: categories(first: 1) { totalCount } }`, map[string]any{"id": other.ID})
	err := wantError(t, r, "NOT_FOUND")
	if len(err.Path) == 0 || err.Path[0] != "missing" {
		t.Errorf("error path = %v, want [missing]", err.Path)
	}
	if jsonErr := jsonUnmarshal(r.data, &out); jsonErr != nil {
		t.Fatal(jsonErr)
	}
	if out.Missing != nil || out.List.TotalCount == 0 {
		t.Errorf("data = %s, want missing null and the list answered", r.data)
	}
}

// A connection computes its cursors only when the selection reads them;
// a cursor asked through a fragment, a named one or an inline one, still
// reads them, and the next page after it follows on.
func TestCategories_CursorsThroughFragments(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const query = `query($after: String) {
  categories(first: 3, after: $after) { nodes { name } ...Paging ... on CategoryConnection { pageInfo { endCursor } } }
}
fragment Paging on CategoryConnection { edges { cursor } }`
	want := seedNames(e.upstream.Categories(restclienttest.DemoKey))[:6]
	var first struct{ Categories categoryConn }
	e.ok(restclienttest.DemoKey, query, nil, &first)
	c := first.Categories
	if len(c.Edges) != 3 || c.Edges[2].Cursor == "" || c.PageInfo.EndCursor == nil || *c.PageInfo.EndCursor != c.Edges[2].Cursor {
		t.Fatalf("edges %+v, endCursor %v: want 3 cursors, the last the end cursor", c.Edges, c.PageInfo.EndCursor)
	}
	var next struct{ Categories categoryConn }
	e.ok(restclienttest.DemoKey, query, map[string]any{"after": *c.PageInfo.EndCursor}, &next)
	if got := append(names(c.Nodes), names(next.Categories.Nodes)...); !slices.Equal(got, want) {
		t.Errorf("names = %v, want %v", got, want)
	}
}

// Lookups by id beside a list of the family wait for the list's answer,
// which holds them: one call, every time, however gqlgen orders the root
// fields' goroutines (no timer decides when the lookups are planned).
func TestCategory_LookupsBesideAListCostItsCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cats := e.upstream.Categories(restclienttest.DemoKey)
	a, b := cats[3], cats[len(cats)-1]
	const query = `query($a: ID!, $b: ID!) {
  x: category(id: $a) { name }
  list: categories(first: 50) { totalCount }
  y: category(id: $b) { name parent { name } }
}`
	for range 20 {
		var out struct {
			X, Y struct{ Name string }
			List struct{ TotalCount int }
		}
		r := e.ok(restclienttest.DemoKey, query, map[string]any{"a": a.ID, "b": b.ID}, &out)
		if out.X.Name != a.Name || out.Y.Name != b.Name || out.List.TotalCount != len(cats) {
			t.Fatalf("data = %s, want %q, %q and %d categories", r.data, a.Name, b.Name, len(cats))
		}
		if r.calls != 1 {
			t.Fatalf("upstream calls = %d, want 1 (the list's page holds both ids): %v", r.calls, e.upstream.Requests())
		}
	}
}
