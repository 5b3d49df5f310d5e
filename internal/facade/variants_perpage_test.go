package facade_test

import (
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/planning/paging"
)

// --- variant 5: categories clamp per_page at 50 ------------------------------

// perPageClamp makes GET /api/v1/categories use (and report) at most limit
// a page when more (up to 100) is asked: it rewrites per_page before the
// fake reads it.
type perPageClamp struct {
	limit   int
	clamped atomic.Int64
}

func (v *perPageClamp) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && upstreamPath(r) == "categories" {
			q := r.URL.Query()
			if n, err := strconv.Atoi(q.Get("per_page")); err == nil && n > v.limit && n <= 100 {
				q.Set("per_page", strconv.Itoa(v.limit))
				r = r.Clone(r.Context())
				r.URL.RawQuery = q.Encode()
				r.RequestURI = r.URL.RequestURI()
				v.clamped.Add(1)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// variantTree is the tree of the brief, with the totals and page info that
// tell whether the list is complete.
const variantTree = `query($after: String) { categories(rootsOnly: true, first: 100, after: $after) {
  totalCount nodes { name subcategoriesCount subcategories(first: 50) { totalCount nodes { name } } }
  pageInfo { hasNextPage hasPreviousPage endCursor } } }`

// seedTree returns key's root names in order and each root's subcategory
// names in order.
func seedTree(e *env, key string) (roots []string, children map[string][]string) {
	all := e.upstream.Categories(key)
	nameOf := map[string]string{}
	for _, c := range all {
		nameOf[c.ID] = c.Name
	}
	children = map[string][]string{}
	for _, c := range all {
		if c.ParentID == "" {
			roots = append(roots, c.Name)
		} else {
			children[nameOf[c.ParentID]] = append(children[nameOf[c.ParentID]], c.Name)
		}
	}
	return roots, children
}

// wantRootsWindow checks a page of roots with their subcategories against
// the seed: the roots at [from, from+n) in order, each with all its
// subcategories (and their totalCount when the query selected it).
func wantRootsWindow(t *testing.T, e *env, key string, from, n int, c categoryConn, withTotals bool) {
	t.Helper()
	roots, children := seedTree(e, key)
	want := roots[from:min(from+n, len(roots))]
	if got := names(c.Nodes); !slices.Equal(got, want) {
		t.Errorf("roots [%d, %d) = %d names %v..., want %d names from %q", from, from+n, len(got), firstThree(got), len(want), want[0])
		return
	}
	for _, r := range c.Nodes {
		if r.Subcategories == nil {
			t.Errorf("%s: subcategories is null", r.Name)
			continue
		}
		if got, want := names(r.Subcategories.Nodes), children[r.Name]; !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Errorf("%s: subcategories = %v, want %v", r.Name, got, want)
		}
		if withTotals && r.Subcategories.TotalCount != len(children[r.Name]) {
			t.Errorf("%s: subcategories totalCount = %d, want %d", r.Name, r.Subcategories.TotalCount, len(children[r.Name]))
		}
	}
}

func firstThree(s []string) []string { return s[:min(3, len(s))] }

func TestVariant_CategoriesPerPageClampedAt50(t *testing.T) {
	t.Parallel()
	v := &perPageClamp{limit: 50}
	e := newVariantEnv(t, v.wrap)
	// The brief's query, as the playground opens it.
	const briefTree = `{ categories(rootsOnly: true, first: 100) { nodes { name subcategories(first: 50) { nodes { name } } } } }`

	t.Run("demo family tree", func(t *testing.T) {
		e := variantEnvFor(t, e)
		key := restclienttest.DemoKey
		before := v.clamped.Load()
		var out struct{ Categories categoryConn }
		r := e.ok(key, briefTree, nil, &out)
		t.Logf("demo family tree: %d calls (%d with per_page clamped)", r.calls, v.clamped.Load()-before)
		if v.clamped.Load() == before {
			t.Error("no per_page was clamped: the variant was not exercised")
		}
		roots, _ := seedTree(e, key)
		wantRootsWindow(t, e, key, 0, len(roots), out.Categories, false)
		var full struct{ Categories categoryConn }
		e.ok(key, variantTree, nil, &full)
		wantRootsWindow(t, e, key, 0, len(roots), full.Categories, true)
		if c := full.Categories; c.TotalCount != len(roots) || c.PageInfo.HasNextPage {
			t.Errorf("totalCount %d, hasNextPage %v; want %d, false", c.TotalCount, c.PageInfo.HasNextPage, len(roots))
		}
	})

	t.Run("large family, first 100 roots (names only)", func(t *testing.T) {
		e := variantEnvFor(t, e)
		key := restclienttest.LargeFamilyKey
		before := v.clamped.Load()
		var out struct{ Categories categoryConn }
		r := e.ok(key, briefTree, nil, &out)
		t.Logf("large family, brief's tree query: %d calls (%d with per_page clamped)", r.calls, v.clamped.Load()-before)
		wantRootsWindow(t, e, key, 0, 100, out.Categories, false)
	})

	// Plain list windows (no family read): a window that no page of 50
	// answers whole.
	t.Run("large family list windows", func(t *testing.T) {
		e := variantEnvFor(t, e)
		key := restclienttest.LargeFamilyKey
		all := seedNames(e.upstream.Categories(key))
		list := "categories?classification=&roots_only=false&parent_id="
		// Windows the first page of 50 (and a refill of at most 50) can
		// answer.
		for _, from := range []int{0, 11, 45, 4950} {
			vars := map[string]any{"first": 100}
			if from > 0 {
				vars["after"] = paging.EncodeCursor(list, from-1)
			}
			var out struct{ Categories categoryConn }
			r := e.ok(key, categoriesPage, vars, &out)
			want := all[from:min(from+100, len(all))]
			got := names(out.Categories.Nodes)
			t.Logf("categories(first: 100) from offset %d: %d calls, %d nodes", from, r.calls, len(got))
			if !slices.Equal(got, want) {
				t.Errorf("from offset %d: %d names (first %v), want %d (first %v)", from, len(got), firstThree(got), len(want), firstThree(want))
			}
			if pi := out.Categories.PageInfo; pi.HasNextPage != (from+100 < len(all)) || pi.HasPreviousPage != (from > 0) {
				t.Errorf("from offset %d: pageInfo = %+v", from, pi)
			}
		}
	})

	t.Run("large family list, forward walk 100 at a time", func(t *testing.T) {
		e := variantEnvFor(t, e)
		key := restclienttest.LargeFamilyKey
		all := seedNames(e.upstream.Categories(key))
		var walked []string
		vars := map[string]any{"first": 100}
		calls := 0
		for step := 0; step < 60; step++ {
			var out struct{ Categories categoryConn }
			r := e.ok(key, categoriesPage, vars, &out)
			calls += r.calls
			c := out.Categories
			if wantN := min(100, len(all)-len(walked)); len(c.Nodes) != wantN {
				t.Errorf("at offset %d: %d categories, want %d", len(walked), len(c.Nodes), wantN)
			}
			walked = append(walked, names(c.Nodes)...)
			if !c.PageInfo.HasNextPage || c.PageInfo.EndCursor == nil {
				break
			}
			vars["after"] = *c.PageInfo.EndCursor
		}
		t.Logf("walking 5,000 categories 100 at a time: %d calls", calls)
		if !slices.Equal(walked, all) {
			t.Errorf("walked %d categories, want the %d of the seed in order", len(walked), len(all))
		}
	})

	t.Run("large family tree, totals and later pages", func(t *testing.T) {
		e := variantEnvFor(t, e)
		key := restclienttest.LargeFamilyKey
		roots, _ := seedTree(e, key)
		rootList := "categories?classification=&roots_only=true&parent_id="
		for _, from := range []int{0, 600, 900} {
			vars := map[string]any{}
			if from > 0 {
				vars["after"] = paging.EncodeCursor(rootList, from-1)
			}
			var out struct{ Categories categoryConn }
			r := e.ok(key, variantTree, vars, &out)
			t.Logf("large family tree from root %d: %d calls", from, r.calls)
			wantRootsWindow(t, e, key, from, 100, out.Categories, true)
			if c := out.Categories; c.TotalCount != len(roots) || c.PageInfo.HasNextPage != (from+100 < len(roots)) || c.PageInfo.HasPreviousPage != (from > 0) {
				t.Errorf("from root %d: totalCount %d, pageInfo %+v; want %d", from, c.TotalCount, c.PageInfo, len(roots))
			}
		}
	})

	// A server that clamps below the size of one parent's subcategories:
	// the per-parent read of the subcategory planner.
	t.Run("clamped at 3, a parent with 4 subcategories", func(t *testing.T) {
		v3 := &perPageClamp{limit: 3}
		e := newVariantEnv(t, v3.wrap)
		key := restclienttest.DemoKey
		_, children := seedTree(e, key)
		transport, _ := e.upstream.CategoryByName(key, "Transportation")
		var out struct{ Category categoryNode }
		r := e.ok(key, `query($id: ID!) { category(id: $id) { name subcategoriesCount subcategories(first: 50) { totalCount nodes { name } pageInfo { hasNextPage } } } }`,
			map[string]any{"id": transport.ID}, &out)
		t.Logf("Transportation's subcategories with per_page clamped at 3: %d calls", r.calls)
		s := out.Category.Subcategories
		if s == nil || !slices.Equal(names(s.Nodes), children["Transportation"]) || s.TotalCount != 4 || s.PageInfo.HasNextPage {
			t.Errorf("subcategories = %+v, want all of %v", s, children["Transportation"])
		}
		var tree struct{ Categories categoryConn }
		r = e.ok(key, variantTree, nil, &tree)
		t.Logf("demo tree with per_page clamped at 3: %d calls", r.calls)
		roots, _ := seedTree(e, key)
		wantRootsWindow(t, e, key, 0, len(roots), tree.Categories, true)
	})
}
