package planner

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// CreatedCategory is a category made by CreateCategory: the upstream's
// answer, or, when that answer was lost, what one read of the family found.
type CreatedCategory struct {
	Category        *restclient.Category
	ConfirmedByRead bool
}

// CreateCategory creates a category, once: one call (POST /categories,
// Sure v0.7.1). Against an older server, whose router does not know the
// endpoint, it is an *UnsupportedError, and no call once that is known.
// Everything this operation and the shared stores hold of the key's
// family is forgotten, so that the key's next read sees the new category.
// When the answer is lost, one read settles it: a category of that name
// (names are unique per family) created since the request was sent, in
// its parent's children or the roots; when that list is longer than the
// page read, its absence proves nothing (the outcome stays unknown,
// unchecked).
func (l *Planner) CreateCategory(ctx context.Context, req restclient.CreateCategoryRequest) (CreatedCategory, error) {
	if l.routeMissing(restcache.TraitCreateCategory) {
		return CreatedCategory{}, errNoCreateCategory
	}
	sent := time.Now()
	c, err := l.client.CreateCategory(ctx, req)
	l.learnRoute(restcache.TraitCreateCategory, err)
	if restclient.IsNoRoute(err) {
		return CreatedCategory{}, errNoCreateCategory
	}
	l.categoriesWritten(err)
	if err == nil {
		l.remember(KindCategory, c.ID)
		return CreatedCategory{Category: c}, nil
	}
	found, confirmed, err := settle(ctx, err, &OutcomeUnknownError{Action: "created", Object: "category"},
		func(ctx context.Context) (*restclient.Category, bool, error) {
			// The narrowest list that holds it: the parent's children, or
			// the roots. A list longer than its page is no proof of absence.
			opts := restclient.ListCategoriesOptions{Page: 1, PerPage: familyPerPage, ParentID: req.ParentID, RootsOnly: req.ParentID == ""}
			page, err := l.client.ListCategories(ctx, opts)
			if err != nil {
				return nil, false, err
			}
			for i := range page.Categories {
				if c := &page.Categories[i]; strings.EqualFold(c.Name, strings.TrimSpace(req.Name)) && !c.CreatedAt.Before(sent.Add(-clockSkew)) {
					return c, true, nil
				}
			}
			if page.Pagination.TotalCount > len(page.Categories) {
				return nil, false, errUnsettled
			}
			return nil, false, nil
		})
	if unsettled(err) {
		l.categoriesWritten(nil)
	}
	if err != nil {
		return CreatedCategory{}, err
	}
	return CreatedCategory{Category: found, ConfirmedByRead: confirmed}, nil
}

// categoriesWritten records that this key sent a category write that
// ended with err: unless the upstream certainly refused it (a 4xx, or
// nothing was sent), what this operation read of the family (answers,
// first pages, family reads, lookups, subcategory lists) and what the
// shared stores hold of it (cached answers, the family's size) is
// forgotten, so that the key's next read sees the write.
func (l *Planner) categoriesWritten(err error) {
	if !mayHaveWritten(err) {
		return
	}
	l.memo.forget(restclient.Categories)
	all := func(string) bool { return true }
	l.firstPages.Forget(all)
	l.families.Forget(all)
	l.faults.forget()
	l.known.reset()
	l.byID.forget()
	l.kids.forget()
	l.nodesWritten()
	if l.shared.FamilySizes != nil {
		l.shared.FamilySizes.Forget(l.apiKey)
	}
	if l.shared.Generations != nil {
		l.shared.Generations.Invalidate(l.apiKey, restclient.Categories)
	}
}

// errUnsettled: the read that looked for a write's effect could not see
// all of where it would be.
var errUnsettled = errors.New("planner: the read did not cover where the write would show")
