package planner

import (
	"context"
	"strconv"

	"suregql/paging"
	"suregql/restclient"
)

// CategoryFilter is the filter of a category list. The zero value is the
// whole family.
type CategoryFilter struct {
	Classification string // "income", "expense" or ""
	RootsOnly      bool
	ParentID       string // canonical UUID or ""
}

// List names the list for cursors: a cursor is valid only on the list (and
// filter) it was made for. Category.subcategories of P is the same list as
// categories(parentId: P).
func (f CategoryFilter) List() string {
	return "categories?classification=" + f.Classification +
		"&roots_only=" + strconv.FormatBool(f.RootsOnly) + "&parent_id=" + f.ParentID
}

// Categories answers a window of a category list: from memory when this
// operation has read the family, otherwise with the fewest upstream pages.
// Every category seen primes the by-id loaders.
func (l *Planner) Categories(ctx context.Context, f CategoryFilter, r paging.Request) (paging.Result[*restclient.Category], error) {
	if all := l.snapshot(f.Classification); all != nil {
		return paging.Slice(r, filterList(all, f)), nil
	}
	return paging.Load(ctx, r, l.categorySource(f))
}

func (l *Planner) categorySource(f CategoryFilter) paging.Source[*restclient.Category] {
	return paging.Source[*restclient.Category]{
		MaxPerPage: restclient.MaxPerPage,
		Afford:     l.Affordable,
		Fetch: func(ctx context.Context, page, perPage int) (paging.Page[*restclient.Category], error) {
			p, err := l.client.ListCategories(ctx, restclient.ListCategoriesOptions{
				Page: page, PerPage: perPage,
				Classification: f.Classification, RootsOnly: f.RootsOnly, ParentID: f.ParentID,
			})
			if err != nil {
				return paging.Page[*restclient.Category]{}, err
			}
			l.PrimeCategories(p.Categories)
			items := make([]*restclient.Category, len(p.Categories))
			for i := range p.Categories {
				items[i] = &p.Categories[i]
			}
			return paging.Page[*restclient.Category]{
				Items: items, Page: p.Pagination.Page, PerPage: p.Pagination.PerPage, Total: p.Pagination.TotalCount,
			}, nil
		},
	}
}

// PrefetchFamily is the look-ahead of a category list whose selection also
// wants subcategories: reading the family (of class) once may answer the
// list and every subcategory in memory. It reads page 1 (one call, which
// tells the family's size); when the family fits that page, the whole tree
// costs that one call. Otherwise it reads the rest only when that costs no
// more than answering the window (windowSize roots) plus one call per root
// would, and the budget allows. Errors are not returned: the list is then
// answered the ordinary way, which reports them.
//
// When an earlier operation showed the family too large for that, and the
// window does not start at the list's beginning (where the first page would
// still hold the subcategories of the first roots), no probe is sent.
func (l *Planner) PrefetchFamily(ctx context.Context, class string, windowSize int, fromStart bool) {
	if windowSize == 0 || l.snapshot(class) != nil || l.Affordable(1) != nil {
		return
	}
	if size, known := l.familySize(class); known && FamilyPages(size)-1 > 1+windowSize && !fromStart {
		return
	}
	first, err := l.familyFirstPage(ctx, class)
	if err != nil {
		return
	}
	rest := FamilyPages(first.Pagination.TotalCount) - 1
	if rest > 1+windowSize || l.Affordable(rest) != nil {
		return
	}
	_, _ = l.readFamily(ctx, class)
}
