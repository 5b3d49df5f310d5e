package planner

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/suregql/suregql/internal/planning/paging"
	"github.com/suregql/suregql/restclient"
)

// A family read is the whole category list of the caller's family (or of
// one classification of it: a subcategory shares its parent's
// classification, so that slice is closed under parent/child), read with
// per_page=100 in parallel pages. Once read, it answers every category list,
// lookup, parent and subcategory of that slice in memory, in the upstream's
// own order (name, then id): filtering an ordered list keeps its order.

// familyPerPage is the page size of family reads: the largest the upstream
// honours, so the fewest pages.
const familyPerPage = restclient.MaxPerPage

// FamilyPages returns how many per_page=100 pages hold n categories.
func FamilyPages(n int) int { return max(1, (n+familyPerPage-1)/familyPerPage) }

// familyFirstPage reads page 1 of the family (or of one classification):
// one call, once per operation, that tells the family's size and may hold
// all of it.
func (l *Planner) familyFirstPage(ctx context.Context, class string) (*restclient.CategoryPage, error) {
	return l.firstPages.Do(ctx, class, func(ctx context.Context) (*restclient.CategoryPage, error) {
		p, err := l.client.ListCategories(ctx, restclient.ListCategoriesOptions{Page: 1, PerPage: familyPerPage, Classification: class})
		if err != nil {
			return nil, err
		}
		l.primeCategories(p.Categories)
		if l.shared.FamilySizes != nil {
			l.shared.FamilySizes.Observe(l.apiKey, class, p.Pagination.TotalCount)
		}
		if p.Pagination.TotalCount <= len(p.Categories) {
			// The whole family (or classification): a family read done.
			l.families.Offer(class, pointers(p.Categories))
		}
		return p, nil
	})
}

// heldFirstPage returns the family's (or a classification's) first page
// when this operation has read it, or nil. It never calls.
func (l *Planner) heldFirstPage(class string) *restclient.CategoryPage {
	if p, ok, err := l.firstPages.Done(class); ok && err == nil {
		return p
	}
	return nil
}

// snapshot returns the complete, ordered categories of class when this
// operation has read them (or the whole family), or nil. It never calls.
func (l *Planner) snapshot(class string) []*restclient.Category {
	if all, ok, err := l.families.Done(class); ok && err == nil {
		return all
	}
	if class == "" {
		return nil
	}
	if all, ok, err := l.families.Done(""); ok && err == nil {
		return filterList(all, CategoryFilter{Classification: class})
	}
	return nil
}

// awaitFamily waits for a read of class (or of the whole family) that
// another planner of this operation has started, and returns its list
// filtered to class; nil when none is in flight or it failed.
func (l *Planner) awaitFamily(ctx context.Context, class string) []*restclient.Category {
	for _, c := range []string{class, ""} {
		if _, ok, _ := l.families.Wait(ctx, c); ok {
			return l.snapshot(class)
		}
	}
	return nil
}

// readFamily reads every category of class, once per operation: page 1,
// then the other pages in parallel, after checking that they fit the
// budget. Concurrent callers share the read. A read refused by the budget
// may be tried again by a later planner (reservations of other fields may
// have ended since); a read that failed upstream is not (see failedRead).
func (l *Planner) readFamily(ctx context.Context, class string) ([]*restclient.Category, error) {
	return l.families.Do(ctx, class, func(ctx context.Context) ([]*restclient.Category, error) {
		return l.readFamilyPages(ctx, class)
	})
}

func (l *Planner) readFamilyPages(ctx context.Context, class string) ([]*restclient.Category, error) {
	if f := l.faults.get(class); f != nil {
		return nil, f.err
	}
	first, err := l.familyFirstPage(ctx, class)
	if err != nil {
		return nil, err // remembered by firstPages: a later read meets it at no call
	}
	total := first.Pagination.TotalCount
	if total <= len(first.Categories) {
		return pointers(first.Categories), nil
	}
	f := CategoryFilter{Classification: class}
	// A window of the list after page 1 when the server honoured its 100
	// (else the whole list, as the server's pages tell): Load fetches the
	// other pages in parallel and places items by the reported page. Its
	// round is reserved (categorySource), so the pages are read whole or
	// not at all; page 1, in hand, is not asked of the budget again.
	start := 0
	if len(first.Categories) == familyPerPage {
		start = familyPerPage
	}
	src := l.categorySource(f)
	held := &heldPages{}
	src.Fetch = held.keep(src.Fetch)
	res, err := paging.Load(ctx, paging.Range(f.List(), start, total-start).WithKnownTotal(total), src)
	if err != nil {
		if upstreamFailure(err) {
			held.add(0, pointers(first.Categories))
			l.faults.put(class, &failedRead{err: err, held: held.list()})
		}
		return nil, err
	}
	if start == 0 {
		return res.Items, nil
	}
	return append(pointers(first.Categories), res.Items...), nil
}

// A failedRead is a family read that failed upstream: a page failed even
// after the client's retries, or the key ran out of quota. The memo keeps
// every page's answer, its errors included, so a second read of the family
// would meet the same error again, at no call, but only after asking the
// budget for all of its pages: a budget already half spent on the first
// read refuses that, and the fault would show as QUERY_TOO_EXPENSIVE. The
// fields the read was to answer get the pages that arrived (held), and
// its error where those do not answer them: no other plan is tried (one
// list per parent would multiply the calls sent to a failing upstream).
type failedRead struct {
	err  error
	held []*restclient.Category // the pages that arrived, in the list's order
}

// failedReads holds the family reads of an operation that failed
// upstream, by classification.
type failedReads struct {
	mu    sync.Mutex
	reads map[string]*failedRead
}

func (f *failedReads) get(class string) *failedRead {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads[class]
}

func (f *failedReads) put(class string, r *failedRead) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reads == nil {
		f.reads = map[string]*failedRead{}
	}
	f.reads[class] = r
}

// forget drops every failed read: a write makes the family worth reading
// again.
func (f *failedReads) forget() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads = nil
}

// failedFamily returns the failed read of class, else of the whole family,
// or nil.
func (l *Planner) failedFamily(class string) *failedRead {
	if f := l.faults.get(class); f != nil || class == "" {
		return f
	}
	return l.faults.get("")
}

// upstreamFailure reports whether a family read that failed with err
// would fail alike if tried again in this operation: anything but a
// refusal of the budget (which the end of other fields' reservations may
// lift) or the end of the caller's context.
func upstreamFailure(err error) bool {
	var tooMuch *TooExpensiveError
	return !errors.As(err, &tooMuch) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// heldPages keeps the pages a Load received, by their offset in the list.
type heldPages struct {
	mu    sync.Mutex
	pages map[int][]*restclient.Category
}

// keep wraps fetch so that every page it answers is kept.
func (h *heldPages) keep(fetch func(context.Context, int, int) (paging.Page[*restclient.Category], error)) func(context.Context, int, int) (paging.Page[*restclient.Category], error) {
	return func(ctx context.Context, page, perPage int) (paging.Page[*restclient.Category], error) {
		p, err := fetch(ctx, page, perPage)
		if err == nil {
			size := p.PerPage
			if size <= 0 {
				size = max(perPage, len(p.Items))
			}
			h.add((max(p.Page, 1)-1)*size, p.Items)
		}
		return p, err
	}
}

func (h *heldPages) add(offset int, items []*restclient.Category) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pages == nil {
		h.pages = map[int][]*restclient.Category{}
	}
	h.pages[offset] = items
}

// list returns the categories of the pages kept, in the list's order,
// each once.
func (h *heldPages) list() []*restclient.Category {
	h.mu.Lock()
	defer h.mu.Unlock()
	offsets := slices.Sorted(maps.Keys(h.pages))
	seen := map[string]bool{}
	var out []*restclient.Category
	for _, off := range offsets {
		for _, c := range h.pages[off] {
			if !seen[c.ID] {
				seen[c.ID] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// narrowed reports whether f keeps only part of the family: a
// classification, the roots, or one parent's children.
func (f CategoryFilter) narrowed() bool {
	return f.Classification != "" || f.RootsOnly || f.ParentID != ""
}

// matches reports whether c is in the list f filters, as the upstream
// filters it.
func (f CategoryFilter) matches(c *restclient.Category) bool {
	if f.Classification != "" && c.Classification != f.Classification {
		return false
	}
	if f.RootsOnly && c.Parent != nil {
		return false
	}
	if f.ParentID != "" && (c.Parent == nil || c.Parent.ID != f.ParentID) {
		return false
	}
	return true
}

// filterList returns the categories of all that f keeps, in order.
func filterList(all []*restclient.Category, f CategoryFilter) []*restclient.Category {
	out := make([]*restclient.Category, 0, len(all))
	for _, c := range all {
		if f.matches(c) {
			out = append(out, c)
		}
	}
	return out
}
