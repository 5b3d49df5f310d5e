package planner_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/restclient"
)

// failingPage starts the fake upstream behind a proxy that answers 503 to
// every request for one page of 100 of the whole family's list.
func failingPage(t *testing.T, page string) upstream {
	t.Helper()
	fake := restclienttest.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path == "/api/v1/categories" && q.Get("page") == page && q.Get("per_page") == "100" &&
			!q.Has("parent_id") && !q.Has("roots_only") && !q.Has("classification") {
			http.Error(w, "<html>proxy error</html>", http.StatusServiceUnavailable)
			return
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return upstream{fake: fake, url: srv.URL}
}

// rootKeys returns the ParentKeys of the first n roots of f with
// subcategories, as the resolver makes them from today's Sure's answers,
// which carry no classification.
func rootKeys(f family, n int) ([]restclienttest.Category, []planner.ParentKey) {
	roots := f.rootsWhere(n, f.hasChildren)
	keys := make([]planner.ParentKey, len(roots))
	for i, r := range roots {
		keys[i] = f.parentKey(r)
		keys[i].Classification = ""
	}
	return roots, keys
}

// TestFamilyRead_FailedPage: the look-ahead of the 100 first roots of the
// large family reads its 50 pages; page 3 fails. The read is not tried
// again, nor replaced by one list per root (which a budget of 100, half
// spent, would refuse): the roots whose subcategories the pages that
// arrived hold whole are answered, the others get the page's 503, at no
// further call.
func TestFamilyRead_FailedPage(t *testing.T) {
	up := failingPage(t, "3")
	large := familyOf(t, up.fake, restclienttest.LargeFamilyKey)
	onPage3 := map[string]bool{} // roots with a subcategory at offsets 200..299
	for i, c := range up.fake.Categories(restclienttest.LargeFamilyKey) {
		if i >= 200 && i < 300 && c.ParentID != "" {
			onPage3[c.ParentID] = true
		}
	}
	roots, keys := rootKeys(large, 100)
	up.bubble(t, func(t *testing.T, c *restclient.Client) {
		l := planner.New(&planner.Shared{Upstream: c, MaxCalls: 100}, caller(restclienttest.LargeFamilyKey))
		before := up.fake.Calls()
		l.LookAhead(t.Context(), "", firstOfRoots(t, 100))
		wantCalls(t, up.fake, before, 49) // and page 3, which the proxy answered

		before = up.fake.Calls()
		got, errs := loadChildren(t.Context(), l, keys)
		wantCalls(t, up.fake, before, 0)
		failed := 0
		for i, r := range roots {
			if !onPage3[r.ID] {
				wantChildren(t, large, roots[i:i+1], got[i:i+1], errs[i:i+1])
				continue
			}
			failed++
			var unavailable *restclient.UnavailableError
			if !errors.As(errs[i], &unavailable) || unavailable.Status != http.StatusServiceUnavailable || got[i] != nil {
				t.Errorf("subcategories of %q (some on the failed page): got (%d, %v), want the page's 503", r.Name, len(got[i]), errs[i])
			}
		}
		if failed == 0 || failed == len(roots) {
			t.Fatalf("%d of %d roots have subcategories on page 3: the test needs some of both", failed, len(roots))
		}

		// Asked again (another look-ahead, a batch's next operation): the
		// same answers, at no call.
		before = up.fake.Calls()
		l.LookAhead(t.Context(), "", firstOfRoots(t, 100))
		_, errs2 := loadChildren(t.Context(), l, keys)
		wantCalls(t, up.fake, before, 0)
		for i := range errs {
			if (errs[i] == nil) != (errs2[i] == nil) {
				t.Errorf("subcategories of %q asked again: error %v, first %v", roots[i].Name, errs2[i], errs[i])
			}
		}
	})
}

// TestFamilyRead_FailedPageWithFewParents: when the subcategories are
// wanted for fewer roots than the family has pages (the plan would be one
// list per root), a family read that failed still answers them: one list
// per root would send 30 calls to a failing upstream.
func TestFamilyRead_FailedPageWithFewParents(t *testing.T) {
	up := failingPage(t, "2")
	large := familyOf(t, up.fake, restclienttest.LargeFamilyKey)
	roots, keys := rootKeys(large, 30) // roots 1..34: offsets 0..~150
	up.bubble(t, func(t *testing.T, c *restclient.Client) {
		l := planner.New(&planner.Shared{Upstream: c, MaxCalls: 100}, caller(restclienttest.LargeFamilyKey))
		l.LookAhead(t.Context(), "", firstOfRoots(t, 100))
		before := up.fake.Calls()
		got, errs := loadChildren(t.Context(), l, keys)
		wantCalls(t, up.fake, before, 0)
		answered := 0
		for i := range roots {
			var unavailable *restclient.UnavailableError
			switch {
			case errs[i] == nil:
				wantChildren(t, large, roots[i:i+1], got[i:i+1], errs[i:i+1])
				answered++
			case !errors.As(errs[i], &unavailable) || unavailable.Status != http.StatusServiceUnavailable:
				t.Errorf("subcategories of %q: got %v, want an answer or the page's 503", roots[i].Name, errs[i])
			}
		}
		if answered == 0 || answered == len(roots) {
			t.Errorf("%d of %d roots answered, want those of page 1 only", answered, len(roots))
		}
	})
}

// TestLookAhead_ExactBudget: the family read reserves the pages it sends,
// not page 1 again, which is in hand: a budget of exactly 50 reads the 50
// pages of the large family, and answers the tree.
func TestLookAhead_ExactBudget(t *testing.T) {
	up := newUpstream(t)
	large := familyOf(t, up.fake, restclienttest.LargeFamilyKey)
	roots, keys := rootKeys(large, 100)
	up.bubble(t, func(t *testing.T, c *restclient.Client) {
		l := planner.New(&planner.Shared{Upstream: c, MaxCalls: 50}, caller(restclienttest.LargeFamilyKey))
		before := up.fake.Calls()
		l.LookAhead(t.Context(), "", firstOfRoots(t, 100))
		wantCalls(t, up.fake, before, 50)
		before = up.fake.Calls()
		got, errs := loadChildren(t.Context(), l, keys)
		wantChildren(t, large, roots, got, errs)
		wantCalls(t, up.fake, before, 0)
	})
}
