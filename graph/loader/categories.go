package loader

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

// Categories answers a window of a category list with the fewest upstream
// pages, and primes the by-id loader with every category it saw.
func (l *Loaders) Categories(ctx context.Context, f CategoryFilter, r paging.Request) (paging.Result[*restclient.Category], error) {
	src := paging.Source[*restclient.Category]{
		MaxPerPage: restclient.MaxPerPage,
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
	return paging.Load(ctx, r, src)
}
