package planner

import (
	"context"
	"strconv"

	"github.com/suregql/suregql/internal/planning/paging"
	"github.com/suregql/suregql/restclient"
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

// Want says what the selection reads on every category the planner hands
// out, so that those reads are planned with the answer that holds the
// categories, not discovered one by one.
type Want struct {
	Subcategories bool // Category.subcategories
	Parent        bool // Category.parent beyond the id and name its child carries
}

// DefaultCategoryPage is the window of a category list when neither first
// nor last is given.
const DefaultCategoryPage = 25

// Categories answers a window of a category list, r (see ParseCategories):
//   - empty by arithmetic: no call;
//   - the family (or the classification) read by this operation: in memory;
//   - the selection wants subcategories of a list of roots: the look-ahead
//     (lookAhead) may read the family instead, answering the list and
//     every subcategory at once;
//   - otherwise the fewest upstream pages (paging.Load).
//
// What want names is announced for the categories handed out, so that
// their subcategories and parents are planned together.
//
// A classification filter asked of a server known to send no
// classification (v0.6.9 and later, which ignore the filter) is an
// *UnsupportedError at no call; the first time, the answers that show it
// are not taken for the filtered list either.
func (l *Planner) Categories(ctx context.Context, f CategoryFilter, r paging.Request, want Want) (paging.Result[*restclient.Category], error) {
	if f.Classification != "" && l.lacksClassification() {
		return paging.Result[*restclient.Category]{}, errNoClassification
	}
	if w, empty, known := r.Empty(); empty && known {
		return paging.Result[*restclient.Category]{Window: w}, nil
	}
	switch {
	case want.Subcategories && f.ParentID == "":
		l.lookAhead(ctx, f.Classification, r)
	case f.narrowed():
		l.readFamilyPageInstead(ctx)
	}
	var res paging.Result[*restclient.Category]
	if all := l.snapshot(f.Classification); all != nil {
		var err error
		if res, err = paging.Slice(r, filterList(all, f), categoryOrder); err != nil {
			return res, err
		}
	} else {
		var err error
		if res, err = paging.Load(ctx, r, l.categorySource(f)); err != nil {
			return res, err
		}
	}
	if f.Classification != "" && l.lacksClassification() {
		// What was read showed a server without classifications: it
		// ignored the filter, and the "filtered" list is the family.
		return paging.Result[*restclient.Category]{}, errNoClassification
	}
	l.expect(res.Items, want)
	return res, nil
}

// readFamilyPageInstead reads the family's first page for a list that
// narrows the family (a classification, its roots, a parent's children):
// when the family is likely to fit that page, the page costs the one call
// the narrowed list would, answers it in memory, and answers every other
// category question of the operation (or of its batch) as well. A family
// found larger is remembered (FamilySizes), and its narrowed lists are read
// as such from then on.
func (l *Planner) readFamilyPageInstead(ctx context.Context) {
	if l.snapshot("") != nil || !l.familyLikelySmall() || l.budget.Affordable(ctx, 1) != nil {
		return
	}
	_, _ = l.familyFirstPage(ctx, "") // an error is reported by the list's own read
}

// Subcategories answers a window of a category's subcategories. The count
// its answer carried (subcategories_count) is current: a leaf, or a
// subcategory (two levels only), costs nothing; up to MaxBatchedChildren
// are planned with every other announced root (see children); more are
// paged like any list.
func (l *Planner) Subcategories(ctx context.Context, parent *restclient.Category, r paging.Request, want Want) (paging.Result[*restclient.Category], error) {
	count := parent.SubcategoriesCount
	if parent.Parent != nil {
		count = 0
	}
	r = r.WithKnownTotal(count)
	if w, empty, known := r.Empty(); empty && known {
		return paging.Result[*restclient.Category]{Window: w}, nil
	}
	f := CategoryFilter{ParentID: parent.ID}
	if count > MaxBatchedChildren {
		return l.Categories(ctx, f, r, want)
	}
	all, err := l.children(ctx, parentKeyOf(parent))
	if err != nil {
		return paging.Result[*restclient.Category]{}, err
	}
	res, err := paging.Slice(r, all, categoryOrder)
	if err != nil {
		return res, err
	}
	l.expect(res.Items, want)
	return res, nil
}

// expect announces the reads want names for cats.
func (l *Planner) expect(cats []*restclient.Category, want Want) {
	if want.Subcategories {
		l.expectChildren(cats)
	}
	if want.Parent {
		l.expectParents(cats)
	}
}

// ParseCategories checks a category list's arguments locally (bad input
// costs no call) and names the list for its cursors.
func ParseCategories(f CategoryFilter, args paging.Args) (paging.Request, error) {
	return paging.Parse(f.List(), args, DefaultCategoryPage)
}

func (l *Planner) categorySource(f CategoryFilter) paging.Source[*restclient.Category] {
	return paging.Source[*restclient.Category]{
		MaxPerPage: restclient.MaxPerPage,
		Reserve:    l.budget.Reserve,
		Order:      categoryOrder,
		Fetch: func(ctx context.Context, page, perPage int) (paging.Page[*restclient.Category], error) {
			var p *restclient.CategoryPage
			var err error
			if page == 1 && perPage == familyPerPage && !f.RootsOnly && f.ParentID == "" {
				// The family's first page: read as such, so that every
				// strategy of the operation knows it holds it.
				p, err = l.familyFirstPage(ctx, f.Classification)
			} else {
				p, err = l.client.ListCategories(ctx, restclient.ListCategoriesOptions{
					Page: page, PerPage: perPage,
					Classification: f.Classification, RootsOnly: f.RootsOnly, ParentID: f.ParentID,
				})
				if err == nil {
					l.primeCategories(p.Categories)
				}
			}
			if err != nil {
				return paging.Page[*restclient.Category]{}, err
			}
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

// lookAhead is the look-ahead of a list of roots whose selection also
// wants subcategories: reading the family (of class) once may answer the
// list and every subcategory in memory. It reads page 1 (one call, which
// tells the family's size); when the family fits that page, the whole tree
// costs that one call. Otherwise it reads the rest only when that costs no
// more than answering the window (its size in roots) plus one call per
// root would, and the budget allows. Errors are not returned: the list is
// then answered the ordinary way, which reports them.
//
// When an earlier operation showed the family too large for that, and the
// window does not start at the list's beginning (where the first page would
// still hold the subcategories of the first roots), no probe is sent.
func (l *Planner) lookAhead(ctx context.Context, class string, r paging.Request) {
	window := r.Size()
	if window == 0 || l.snapshot(class) != nil || l.budget.Affordable(ctx, 1) != nil {
		return
	}
	if size, known := l.familySize(class); known && FamilyPages(size)-1 > 1+window && !r.FromStart() {
		return
	}
	first, err := l.familyFirstPage(ctx, class)
	if err != nil {
		return
	}
	rest := FamilyPages(first.Pagination.TotalCount) - 1
	if rest > 1+window || l.budget.Affordable(ctx, rest) != nil {
		return
	}
	_, _ = l.readFamily(ctx, class)
}

// Expect announces the reads want names for categories handed out by a
// question that did not know the selection when it planned (node(id)).
func (l *Planner) Expect(cats []*restclient.Category, want Want) { l.expect(cats, want) }
