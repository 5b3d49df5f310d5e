package planner

import (
	"context"

	"suregql/paging"
	"suregql/restclient"
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
		l.PrimeCategories(p.Categories)
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
// budget. Concurrent callers share the read; a failed or refused read may
// be tried again by a later planner (a refusal stays a refusal: the budget
// only shrinks).
func (l *Planner) readFamily(ctx context.Context, class string) ([]*restclient.Category, error) {
	return l.families.Do(ctx, class, func(ctx context.Context) ([]*restclient.Category, error) {
		return l.readFamilyPages(ctx, class)
	})
}

func (l *Planner) readFamilyPages(ctx context.Context, class string) ([]*restclient.Category, error) {
	first, err := l.familyFirstPage(ctx, class)
	if err != nil {
		return nil, err
	}
	total := first.Pagination.TotalCount
	if total <= len(first.Categories) {
		return pointers(first.Categories), nil
	}
	f := CategoryFilter{Classification: class}
	// A window of the whole list: Load fetches pages 2.. in parallel (page
	// 1 is memoized) and places items by the reported page. Its round is
	// reserved (categorySource), so the pages are read whole or not at all.
	res, err := paging.Load(ctx, paging.Range(f.List(), 0, total).WithKnownTotal(total), l.categorySource(f))
	if err != nil {
		return nil, err
	}
	return res.Items, nil
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
