package planner_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/planning/paging"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// upstream is the fake Sure server on loopback.
type upstream struct {
	fake *restclienttest.Server
	url  string
}

// newUpstream starts the fake upstream (today's Sure, unless opts say
// otherwise). It must run outside any synctest bubble: the server's
// goroutines wait on the network.
func newUpstream(t *testing.T, opts ...restclienttest.Option) upstream {
	t.Helper()
	fake := restclienttest.New(opts...)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return upstream{fake: fake, url: srv.URL}
}

// client returns a client of u without retries whose transport keeps no
// idle connection: inside a synctest bubble no goroutine then waits on the
// network between requests, so the loaders' batch timers (fake time) fire
// as soon as every caller waits.
func (u upstream) client(t *testing.T) *restclient.Client {
	t.Helper()
	tr := &http.Transport{DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	c, err := restclient.New(u.url,
		restclient.WithHTTPClient(&http.Client{Timeout: 10 * time.Second, Transport: tr}),
		restclient.WithRetryPolicy(restclient.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// bubble runs f in a synctest bubble with a fresh client of u, so that
// concurrent loads are batched deterministically: the 1ms batch wait of
// the loaders ends only once every goroutine of the bubble is blocked.
func (u upstream) bubble(t *testing.T, f func(t *testing.T, c *restclient.Client)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		f(t, u.client(t))
	})
}

// family is a seeded family: its roots and each root's subcategories, in
// the upstream's order.
type family struct {
	roots    []restclienttest.Category
	children map[string][]restclienttest.Category
}

func familyOf(t *testing.T, fake *restclienttest.Server, key string) family {
	t.Helper()
	f := family{children: map[string][]restclienttest.Category{}}
	for _, c := range fake.Categories(key) {
		if c.ParentID == "" {
			f.roots = append(f.roots, c)
		} else {
			f.children[c.ParentID] = append(f.children[c.ParentID], c)
		}
	}
	if len(f.roots) == 0 {
		t.Fatalf("no seeded categories for %q", key)
	}
	return f
}

// parentKey is the ParentKey the subcategories resolver builds for root.
func (f family) parentKey(root restclienttest.Category) planner.ParentKey {
	return planner.ParentKey{ID: root.ID, Classification: root.Classification, Count: len(f.children[root.ID])}
}

// rootsWhere returns up to n roots (n < 0: all) for which keep holds.
func (f family) rootsWhere(n int, keep func(restclienttest.Category) bool) []restclienttest.Category {
	var out []restclienttest.Category
	for _, r := range f.roots {
		if n >= 0 && len(out) == n {
			break
		}
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

func (f family) hasChildren(r restclienttest.Category) bool { return len(f.children[r.ID]) > 0 }

func ids[T any](items []T, id func(T) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = id(it)
	}
	return out
}

func restID(c *restclient.Category) string      { return c.ID }
func seedID(c restclienttest.Category) string   { return c.ID }
func seedName(c restclienttest.Category) string { return c.Name }
func restName(c *restclient.Category) string    { return c.Name }

// loadChildren asks for the subcategories of every key at once, each from
// its own goroutine, as gqlgen resolves the nodes of a list.
func loadChildren(ctx context.Context, l *planner.Planner, keys []planner.ParentKey) ([][]*restclient.Category, []error) {
	out := make([][]*restclient.Category, len(keys))
	errs := make([]error, len(keys))
	l.ExpectChildren(keys...) // as the list that handed the roots out does
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Go(func() { out[i], errs[i] = l.Children(ctx, k) })
	}
	wg.Wait()
	return out, errs
}

// wantChildren checks that got[i] are the subcategories of roots[i], in
// the upstream's order.
func wantChildren(t *testing.T, f family, roots []restclienttest.Category, got [][]*restclient.Category, errs []error) {
	t.Helper()
	for i, r := range roots {
		if errs[i] != nil {
			t.Errorf("subcategories of %q: got error %v, want none", r.Name, errs[i])
			continue
		}
		want := ids(f.children[r.ID], seedID)
		if g := ids(got[i], restID); !slices.Equal(g, want) {
			t.Errorf("subcategories of %q: got %v, want %v", r.Name, ids(got[i], restName), ids(f.children[r.ID], seedName))
		}
		if got[i] == nil {
			t.Errorf("subcategories of %q: got nil, want a list", r.Name)
		}
		for _, c := range got[i] {
			if c.Parent == nil || c.Parent.ID != r.ID {
				t.Errorf("subcategory %q of %q: got parent %+v, want %s", c.Name, r.Name, c.Parent, r.ID)
			}
		}
	}
}

func wantCalls(t *testing.T, fake *restclienttest.Server, before, want int) {
	t.Helper()
	if got := fake.Calls() - before; got != want {
		t.Errorf("upstream calls = %d, want %d (requests: %v)", got, want, lastRequests(fake, got))
	}
}

func lastRequests(fake *restclienttest.Server, n int) []string {
	reqs := fake.Requests()
	var out []string
	for _, r := range reqs[max(0, len(reqs)-n):] {
		out = append(out, r.Path+"?"+r.RawQuery)
	}
	if len(out) > 12 {
		out = append(out[:12], fmt.Sprintf("… %d more", len(out)-12))
	}
	return out
}

func TestChildren_BatchesIntoFewCalls(t *testing.T) {
	// Categories with classifications: the slices of a classification
	// are planned here too.
	up := newUpstream(t, restclienttest.WithVersion(restclienttest.Legacy))
	demo := familyOf(t, up.fake, restclienttest.DemoKey)
	large := familyOf(t, up.fake, restclienttest.LargeFamilyKey)
	every := func(restclienttest.Category) bool { return true }
	for _, tc := range []struct {
		name      string
		key       string
		f         family
		roots     []restclienttest.Category
		wantCalls int // at most
	}{
		{"demo: every root with subcategories", restclienttest.DemoKey, demo, demo.rootsWhere(-1, demo.hasChildren), 1},
		{"demo: every root, leaves included", restclienttest.DemoKey, demo, demo.rootsWhere(-1, every), 1},
		{"demo: the expense roots", restclienttest.DemoKey, demo, demo.rootsWhere(-1, func(r restclienttest.Category) bool {
			return r.Classification == "expense" && demo.hasChildren(r)
		}), 1},
		{"demo: two roots", restclienttest.DemoKey, demo, demo.rootsWhere(2, demo.hasChildren), 1},
		{"demo: one root", restclienttest.DemoKey, demo, demo.rootsWhere(1, demo.hasChildren), 1},
		{"large: 100 roots with subcategories", restclienttest.LargeFamilyKey, large, large.rootsWhere(100, large.hasChildren), 50},
		{"large: 100 income roots with subcategories", restclienttest.LargeFamilyKey, large, large.rootsWhere(100, func(r restclienttest.Category) bool {
			return r.Classification == "income" && large.hasChildren(r)
		}), 14}, // the income slice: 333 roots and 999 subcategories
		{"large: the first 10 roots", restclienttest.LargeFamilyKey, large, large.rootsWhere(10, large.hasChildren), 1},
		{"large: 3 roots far apart", restclienttest.LargeFamilyKey, large, []restclienttest.Category{large.roots[300], large.roots[600], large.roots[999]}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up.bubble(t, func(t *testing.T, c *restclient.Client) {
				l := planner.New(&planner.Shared{Upstream: c}, caller(tc.key))
				keys := make([]planner.ParentKey, len(tc.roots))
				for i, r := range tc.roots {
					keys[i] = tc.f.parentKey(r)
				}
				before := up.fake.Calls()
				got, errs := loadChildren(t.Context(), l, keys)
				wantChildren(t, tc.f, tc.roots, got, errs)
				calls := up.fake.Calls() - before
				t.Logf("%d roots: %d upstream calls", len(keys), calls)
				if calls > tc.wantCalls || calls < 1 {
					t.Errorf("upstream calls = %d for %d roots, want 1..%d (requests: %v)", calls, len(keys), tc.wantCalls, lastRequests(up.fake, calls))
				}
				if got := l.Budget().Calls(); got != calls {
					t.Errorf("Planner.Calls() = %d, want %d (what the upstream counted)", got, calls)
				}

				// Asked again in the same operation: answered from memory.
				before = up.fake.Calls()
				got, errs = loadChildren(t.Context(), l, keys)
				wantChildren(t, tc.f, tc.roots, got, errs)
				wantCalls(t, up.fake, before, 0)
			})
		})
	}
}

// TestChildren_UsesKnownFamilySize: when the shared hint already says the
// family is far larger than the batch, reading the family's first page
// cannot be the cheaper plan; one filtered list per root is.
func TestChildren_UsesKnownFamilySize(t *testing.T) {
	up := newUpstream(t)
	large := familyOf(t, up.fake, restclienttest.LargeFamilyKey)
	roots := []restclienttest.Category{large.roots[300], large.roots[600], large.roots[999]}
	var calls int
	up.bubble(t, func(t *testing.T, c *restclient.Client) {
		sizes := &restcache.FamilySizes{}
		sizes.Observe(keyOf(restclienttest.LargeFamilyKey), "", 5000)
		l := planner.New(&planner.Shared{Upstream: c, FamilySizes: sizes}, caller(restclienttest.LargeFamilyKey))
		keys := make([]planner.ParentKey, len(roots))
		for i, r := range roots {
			keys[i] = large.parentKey(r)
		}
		before := up.fake.Calls()
		got, errs := loadChildren(t.Context(), l, keys)
		wantChildren(t, large, roots, got, errs)
		calls = up.fake.Calls() - before
	})
	if calls != len(roots) {
		t.Errorf("3 roots of a family known to hold 5,000 categories cost %d calls, want %d (one list per root, no probe)", calls, len(roots))
	}
}

func TestChildren_Budget(t *testing.T) {
	up := newUpstream(t)
	demo := familyOf(t, up.fake, restclienttest.DemoKey)
	large := familyOf(t, up.fake, restclienttest.LargeFamilyKey)

	t.Run("nothing affordable: refused, nothing sent", func(t *testing.T) {
		up.bubble(t, func(t *testing.T, c *restclient.Client) {
			l := planner.New(&planner.Shared{Upstream: c, MaxCalls: 1}, caller(restclienttest.DemoKey))
			if _, err := l.Client().ListChats(t.Context(), 1); err != nil {
				t.Fatal(err)
			}
			roots := demo.rootsWhere(2, demo.hasChildren)
			before := up.fake.Calls()
			_, errs := loadChildren(t.Context(), l, []planner.ParentKey{demo.parentKey(roots[0]), demo.parentKey(roots[1])})
			for i, err := range errs {
				var tooMuch *planner.TooExpensiveError
				if !errors.As(err, &tooMuch) {
					t.Errorf("root %d: got error %v, want a *planner.TooExpensiveError", i, err)
					continue
				}
				if want := (planner.TooExpensiveError{Budget: 1, Spent: 1, Planned: 2}); *tooMuch != want {
					t.Errorf("root %d: got %+v, want %+v", i, *tooMuch, want)
				}
			}
			wantCalls(t, up.fake, before, 0)
		})
	})

	t.Run("one root within the budget", func(t *testing.T) {
		up.bubble(t, func(t *testing.T, c *restclient.Client) {
			l := planner.New(&planner.Shared{Upstream: c, MaxCalls: 1}, caller(restclienttest.DemoKey))
			roots := demo.rootsWhere(1, demo.hasChildren)
			before := up.fake.Calls()
			got, errs := loadChildren(t.Context(), l, []planner.ParentKey{demo.parentKey(roots[0])})
			wantChildren(t, demo, roots, got, errs)
			wantCalls(t, up.fake, before, 1)
		})
	})

	t.Run("large: a batch past the budget is refused whole", func(t *testing.T) {
		up.bubble(t, func(t *testing.T, c *restclient.Client) {
			const budget = 10
			l := planner.New(&planner.Shared{Upstream: c, MaxCalls: budget}, caller(restclienttest.LargeFamilyKey))
			roots := large.rootsWhere(100, large.hasChildren)
			keys := make([]planner.ParentKey, len(roots))
			for i, r := range roots {
				keys[i] = large.parentKey(r)
			}
			before := up.fake.Calls()
			got, errs := loadChildren(t.Context(), l, keys)
			// The family's first page (to learn its size), then nothing:
			// the rest needs far more than the budget.
			wantCalls(t, up.fake, before, 1)
			for i, err := range errs {
				var tooMuch *planner.TooExpensiveError
				if !errors.As(err, &tooMuch) || got[i] != nil {
					t.Fatalf("root %q: got (%v, %v), want a *planner.TooExpensiveError", roots[i].Name, got[i], err)
				}
				// Planned counts the parents the first page did not answer.
				if tooMuch.Budget != budget || tooMuch.Spent != 1 || tooMuch.Planned <= 0 || tooMuch.Planned >= len(roots) {
					t.Errorf("refusal: got %+v, want budget %d, spent 1, planned between 1 and %d", *tooMuch, budget, len(roots)-1)
				}
			}
		})
	})
}

func TestAffordable(t *testing.T) {
	up := newUpstream(t)
	demo := familyOf(t, up.fake, restclienttest.DemoKey)
	for _, tc := range []struct {
		name   string
		budget int
		spend  int // distinct GETs sent first
		n      int
		want   *planner.TooExpensiveError
	}{
		{"no budget", 0, 2, 1000, nil},
		{"nothing asked", 3, 3, 0, nil},
		{"within", 3, 0, 3, nil},
		{"over", 3, 0, 4, &planner.TooExpensiveError{Budget: 3, Spent: 0, Planned: 4}},
		{"within after spending", 3, 2, 1, nil},
		{"over after spending", 3, 2, 2, &planner.TooExpensiveError{Budget: 3, Spent: 2, Planned: 2}},
		{"spent whole", 2, 2, 1, &planner.TooExpensiveError{Budget: 2, Spent: 2, Planned: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := up.client(t)
			l := planner.New(&planner.Shared{Upstream: c, MaxCalls: tc.budget}, caller(restclienttest.DemoKey))
			for i := range tc.spend {
				if _, err := l.Client().GetCategory(t.Context(), demo.roots[i].ID); err != nil {
					t.Fatal(err)
				}
			}
			before := up.fake.Calls()
			err := l.Budget().Affordable(t.Context(), tc.n)
			wantCalls(t, up.fake, before, 0)
			if tc.want == nil {
				if err != nil {
					t.Errorf("Affordable(%d) = %v, want nil", tc.n, err)
				}
				return
			}
			var got *planner.TooExpensiveError
			if !errors.As(err, &got) || *got != *tc.want {
				t.Errorf("Affordable(%d) = %v, want %+v", tc.n, err, *tc.want)
			}
		})
	}
}

func TestGate_RefusesPastTheBudget(t *testing.T) {
	up := newUpstream(t)
	demo := familyOf(t, up.fake, restclienttest.DemoKey)
	l := planner.New(&planner.Shared{Upstream: up.client(t), MaxCalls: 1}, caller(restclienttest.DemoKey))
	before := up.fake.Calls()
	if _, err := l.Client().GetCategory(t.Context(), demo.roots[0].ID); err != nil {
		t.Fatalf("first call: got %v, want none", err)
	}
	_, err := l.Client().GetCategory(t.Context(), demo.roots[1].ID)
	var gate *restclient.GateError
	var tooMuch *planner.TooExpensiveError
	if !errors.As(err, &gate) || !errors.As(err, &tooMuch) {
		t.Fatalf("second call: got %v, want a GateError wrapping a *planner.TooExpensiveError", err)
	}
	if want := (planner.TooExpensiveError{Budget: 1, Spent: 1, Planned: 1}); *tooMuch != want {
		t.Errorf("got %+v, want %+v", *tooMuch, want)
	}
	// The memo answers a repeat without asking the gate.
	if c, err := l.Client().GetCategory(t.Context(), demo.roots[0].ID); err != nil || c.ID != demo.roots[0].ID {
		t.Errorf("repeat of the first call: got (%v, %v), want the category", c, err)
	}
	wantCalls(t, up.fake, before, 1)
	if got := l.Budget().Calls(); got != 1 {
		t.Errorf("Calls() = %d, want 1", got)
	}
}

func TestLookAhead(t *testing.T) {
	up := newUpstream(t, restclienttest.WithVersion(restclienttest.Legacy))
	demo := familyOf(t, up.fake, restclienttest.DemoKey)
	ctx := t.Context()
	l := planner.New(&planner.Shared{Upstream: up.client(t)}, caller(restclienttest.DemoKey))
	before := up.fake.Calls()
	f := planner.CategoryFilter{RootsOnly: true}
	first := 25
	req, err := paging.Parse(f.List(), paging.Args{First: &first}, 25)
	if err != nil {
		t.Fatal(err)
	}
	l.LookAhead(ctx, "", req)
	wantCalls(t, up.fake, before, 1)

	before = up.fake.Calls()
	res, err := l.Categories(ctx, f, req, planner.Want{})
	if err != nil {
		t.Fatalf("Categories: got %v, want none", err)
	}
	if got, want := ids(res.Items, restName), ids(demo.roots, seedName); !slices.Equal(got, want) {
		t.Errorf("roots: got %v, want %v", got, want)
	}
	if res.Total != len(demo.roots) || res.HasNextPage() || res.HasPreviousPage() {
		t.Errorf("window: got %+v, want all %d roots", res.Window, len(demo.roots))
	}

	// Every subcategory and lookup of the family is in memory now.
	for _, r := range demo.roots {
		got, err := l.Children(ctx, demo.parentKey(r))
		wantChildren(t, demo, []restclienttest.Category{r}, [][]*restclient.Category{got}, []error{err})
	}
	for _, list := range []planner.CategoryFilter{
		{},
		{Classification: "income"},
		{ParentID: demo.roots[0].ID},
		{Classification: "expense", RootsOnly: true},
	} {
		req, err := paging.Parse(list.List(), paging.Args{}, 100)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Categories(ctx, list, req, planner.Want{}); err != nil {
			t.Errorf("Categories(%+v): got %v, want none", list, err)
		}
	}
	if c, err := l.Category(ctx, demo.children[demo.roots[0].ID][0].ID, planner.Want{}); err != nil || c.Parent == nil {
		t.Errorf("Category: got (%+v, %v), want the subcategory", c, err)
	}
	wantCalls(t, up.fake, before, 0)
}

func TestLookAhead_DoesNotReadALargeFamilyForASmallWindow(t *testing.T) {
	up := newUpstream(t)
	l := planner.New(&planner.Shared{Upstream: up.client(t)}, caller(restclienttest.LargeFamilyKey))
	before := up.fake.Calls()
	l.LookAhead(t.Context(), "", firstOfRoots(t, 25))
	wantCalls(t, up.fake, before, 1) // page 1 tells the size: 50 pages
}

func TestLookAhead_RespectsTheBudget(t *testing.T) {
	up := newUpstream(t)
	l := planner.New(&planner.Shared{Upstream: up.client(t), MaxCalls: 1}, caller(restclienttest.DemoKey))
	if _, err := l.Client().ListChats(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	before := up.fake.Calls()
	l.LookAhead(t.Context(), "", firstOfRoots(t, 25))
	wantCalls(t, up.fake, before, 0)
}

func TestFor(t *testing.T) {
	shared := &planner.Shared{Upstream: mustClient(t)}
	for _, tc := range []struct {
		name    string
		ctx     func(context.Context) context.Context
		wantErr error
	}{
		// A wiring bug, not the caller's key.
		{"no planner", func(ctx context.Context) context.Context { return ctx }, planner.ErrNoPlanner},
		{"empty key", withKey(shared, ""), callerkey.ErrNoAPIKey},
		{"key with a space", withKey(shared, "demo key"), callerkey.ErrBadAPIKey},
		{"key with a tab", withKey(shared, "demo\tkey"), callerkey.ErrBadAPIKey},
		{"key with a newline", withKey(shared, "demo-key\n"), callerkey.ErrBadAPIKey},
		{"non-ASCII key", withKey(shared, "clé-demo"), callerkey.ErrBadAPIKey},
		{"key too long", withKey(shared, strings.Repeat("a", 513)), callerkey.ErrBadAPIKey},
		{"longest key", withKey(shared, strings.Repeat("a", 512)), nil},
		{"demo key", withKey(shared, restclienttest.DemoKey), nil},
		{"printable punctuation", withKey(shared, "a!~{}"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tc.ctx(t.Context())
			l, err := planner.For(ctx)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("For: got error %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil {
				if l != nil {
					t.Errorf("For: got loaders %p with the error, want nil", l)
				}
				return
			}
			if l == nil || l != planner.From(ctx) {
				t.Errorf("For: got %p, want the context's loaders %p", l, planner.From(ctx))
			}
			if l.KeyError() != nil {
				t.Errorf("KeyError() = %v, want nil", l.KeyError())
			}
		})
	}
}

func mustClient(t *testing.T) *restclient.Client {
	t.Helper()
	c, err := restclient.New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func withKey(shared *planner.Shared, key string) func(context.Context) context.Context {
	return func(ctx context.Context) context.Context {
		return planner.WithPlanner(ctx, planner.New(shared, caller(key)))
	}
}

func TestMemo_OneGETPerOperation(t *testing.T) {
	up := newUpstream(t)
	ctx := t.Context()
	shared := &planner.Shared{Upstream: up.client(t)}
	l := planner.New(shared, caller(restclienttest.DemoKey))
	opts := restclient.ListCategoriesOptions{Page: 1, PerPage: 10}

	before := up.fake.Calls()
	const callers = 20
	pages := make([]*restclient.CategoryPage, callers)
	errs := make([]error, callers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			<-start
			pages[i], errs[i] = l.Client().ListCategories(ctx, opts)
		})
	}
	close(start)
	wg.Wait()
	for i := range callers {
		if errs[i] != nil || pages[i] == nil || len(pages[i].Categories) != 10 {
			t.Errorf("caller %d: got (%v, %v), want a page of 10", i, pages[i], errs[i])
		}
	}
	wantCalls(t, up.fake, before, 1)

	for _, tc := range []struct {
		name string
		do   func(l *planner.Planner) error
		want int
	}{
		{"the same GET again", func(l *planner.Planner) error {
			_, err := l.Client().ListCategories(ctx, opts)
			return err
		}, 0},
		{"another page", func(l *planner.Planner) error {
			_, err := l.Client().ListCategories(ctx, restclient.ListCategoriesOptions{Page: 2, PerPage: 10})
			return err
		}, 1},
		{"chats", func(l *planner.Planner) error {
			_, err := l.Client().ListChats(ctx, 1)
			return err
		}, 1},
		{"chats again", func(l *planner.Planner) error {
			_, err := l.Client().ListChats(ctx, 1)
			return err
		}, 0},
		// The write is one call, the chats read after it another.
		{"chats after this operation wrote one", func(l *planner.Planner) error {
			if _, err := l.CreateChat(ctx, restclient.CreateChatRequest{Title: "Groceries"}); err != nil {
				return err
			}
			_, err := l.Client().ListChats(ctx, 1)
			return err
		}, 2},
		{"categories after a chat write", func(l *planner.Planner) error {
			if _, err := l.CreateChat(ctx, restclient.CreateChatRequest{Title: "Rent"}); err != nil {
				return err
			}
			_, err := l.Client().ListCategories(ctx, opts)
			return err
		}, 1},
		{"another operation sends again", func(*planner.Planner) error {
			_, err := planner.New(shared, caller(restclienttest.DemoKey)).Client().ListCategories(ctx, opts)
			return err
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := up.fake.Calls()
			if err := tc.do(l); err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			wantCalls(t, up.fake, before, tc.want)
		})
	}
}

func TestMemo_SharesErrorsWithinTheOperation(t *testing.T) {
	up := newUpstream(t)
	l := planner.New(&planner.Shared{Upstream: up.client(t)}, caller(restclienttest.DemoKey))
	const missing = "00000000-0000-4000-8000-000000000000"
	before := up.fake.Calls()
	for i := range 3 {
		if _, err := l.Client().GetCategory(t.Context(), missing); !restclient.IsNotFound(err) {
			t.Errorf("lookup %d: got %v, want a 404", i, err)
		}
	}
	wantCalls(t, up.fake, before, 1)
}

func TestCategory_LookupsShareTheFamilysFirstPage(t *testing.T) {
	up := newUpstream(t)
	demo := familyOf(t, up.fake, restclienttest.DemoKey)
	large := familyOf(t, up.fake, restclienttest.LargeFamilyKey)
	for _, tc := range []struct {
		name      string
		key       string
		want      []restclienttest.Category
		knownSize int // FamilySizes hint; 0 for none
		wantCalls int
	}{
		{"demo: three ids, one page", restclienttest.DemoKey, []restclienttest.Category{demo.roots[0], demo.roots[5], demo.children[demo.roots[0].ID][1]}, 0, 1},
		{"demo: one id, one show", restclienttest.DemoKey, []restclienttest.Category{demo.roots[3]}, 0, 1},
		{"large, size known: one show each", restclienttest.LargeFamilyKey, []restclienttest.Category{large.roots[500], large.roots[900]}, 5000, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up.bubble(t, func(t *testing.T, c *restclient.Client) {
				shared := &planner.Shared{Upstream: c, FamilySizes: &restcache.FamilySizes{}}
				if tc.knownSize > 0 {
					shared.FamilySizes.Observe(keyOf(tc.key), "", tc.knownSize)
				}
				l := planner.New(shared, caller(tc.key))
				got := make([]*restclient.Category, len(tc.want))
				errs := make([]error, len(tc.want))
				// As graph.Planning does: the operation's category(id:)
				// root fields are announced before any asks.
				var op planner.Operation
				for _, w := range tc.want {
					op.CategoryIDs = append(op.CategoryIDs, w.ID)
				}
				l.Begin(op)
				before := up.fake.Calls()
				var wg sync.WaitGroup
				for i, w := range tc.want {
					wg.Go(func() { got[i], errs[i] = l.Category(t.Context(), w.ID, planner.Want{}) })
				}
				wg.Wait()
				for i, w := range tc.want {
					if errs[i] != nil || got[i] == nil || got[i].ID != w.ID || got[i].Name != w.Name {
						t.Errorf("Category(%s): got (%+v, %v), want %q", w.ID, got[i], errs[i], w.Name)
					}
				}
				wantCalls(t, up.fake, before, tc.wantCalls)
			})
		})
	}
}

func TestRateLimit_IsRemembered(t *testing.T) {
	up := newUpstream(t)
	shared := &planner.Shared{Upstream: up.client(t), RateLimits: &restcache.RateLimits{}}
	l := planner.New(shared, caller(restclienttest.DemoKey))
	if rl := l.RateLimit(); rl != nil {
		t.Errorf("RateLimit() before any call = %+v, want nil", rl)
	}
	if _, err := l.Client().ListChats(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	rl := l.RateLimit()
	if rl == nil || rl.Limit != 1000 || rl.Remaining < 0 || rl.Remaining >= 1000 {
		t.Fatalf("RateLimit() = %+v, want the premium limit of 1000 with some spent", rl)
	}
	// A later operation of the same key knows it without a call; another
	// key does not.
	if got := planner.New(shared, caller(restclienttest.DemoKey)).RateLimit(); got == nil || *got != *rl {
		t.Errorf("next operation: RateLimit() = %+v, want %+v", got, rl)
	}
	if got := planner.New(shared, caller(restclienttest.OtherFamilyKey)).RateLimit(); got != nil {
		t.Errorf("other key: RateLimit() = %+v, want nil", got)
	}
}

// meter records the calls a Meter is told of.
type meter struct {
	mu    sync.Mutex
	calls []restclient.Call
}

func (m *meter) UpstreamCall(c restclient.Call) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, c)
}

// The Meter is told of every request sent, retries included, and of none
// the gate refused; a local refusal of a key out of quota is reported.
func TestMeter_SeesEveryCallSent(t *testing.T) {
	up := newUpstream(t)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	client, err := restclient.New(up.url,
		restclient.WithHTTPClient(&http.Client{Timeout: 10 * time.Second, Transport: tr}),
		restclient.WithRetryPolicy(restclient.RetryPolicy{MaxRetries: 1}))
	if err != nil {
		t.Fatal(err)
	}
	m := &meter{}
	shared := &planner.Shared{Upstream: client, RateLimits: &restcache.RateLimits{}, Meter: m}
	key := restclienttest.OtherFamilyKey
	up.fake.SetRateLimit(key, 3)
	up.fake.FailNext("/api/v1/chats", 1, http.StatusBadGateway, "text/html", "<html>bad gateway</html>")

	l := planner.New(shared, caller(key))
	if _, err := l.Client().ListChats(t.Context(), 1); err != nil { // a 502, then its retry
		t.Fatal(err)
	}
	if _, err := l.Client().GetCategory(t.Context(), "00000000-0000-4000-8000-000000000000"); !restclient.IsNotFound(err) {
		t.Fatalf("unknown category: got %v, want a 404", err)
	}
	if l.RefusedOutOfQuota() {
		t.Error("RefusedOutOfQuota() = true before the key ran out")
	}
	// The window is spent: the next operation is refused without a call.
	next := planner.New(shared, caller(key))
	if _, err := next.Client().ListChats(t.Context(), 2); err == nil {
		t.Fatal("a key out of quota: got no error")
	}
	if !next.RefusedOutOfQuota() {
		t.Error("RefusedOutOfQuota() = false after a local refusal")
	}

	var got []string
	for _, c := range m.calls {
		got = append(got, fmt.Sprintf("%s %d attempt %d", c.Endpoint, c.Status, c.Attempt))
	}
	want := []string{
		"GET /api/v1/chats 502 attempt 0",
		"GET /api/v1/chats 200 attempt 1",
		"GET /api/v1/categories/{id} 404 attempt 0",
	}
	if !slices.Equal(got, want) {
		t.Errorf("the Meter was told of %q, want %q", got, want)
	}
	if n := up.fake.Calls(); n != len(m.calls) {
		t.Errorf("the upstream counted %d calls, the Meter %d", n, len(m.calls))
	}
}

// firstOfRoots is the request categories(rootsOnly: true, first: n).
func firstOfRoots(t *testing.T, n int) paging.Request {
	t.Helper()
	req, err := paging.Parse(planner.CategoryFilter{RootsOnly: true}.List(), paging.Args{First: &n}, 25)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
