package loader

import (
	"context"
	"sync"

	"suregql/restclient"
)

// ParentKey names a root category whose subcategories are wanted, with
// what its list answer said about them.
type ParentKey struct {
	ID             string
	Classification string
	Count          int // subcategories_count
}

// MaxBatchedChildren is the largest subcategory count the planner reads
// whole: up to one page of 100. Larger families of children are paged like
// any list.
const MaxBatchedChildren = restclient.MaxPerPage

// Children returns every subcategory of a root, in the upstream's order.
// The subcategories asked for by one operation are planned together (see
// planChildren). Only for counts up to MaxBatchedChildren.
func (l *Loaders) Children(ctx context.Context, p ParentKey) ([]*restclient.Category, error) {
	if all := l.snapshot(p.Classification); all != nil {
		return filterList(all, CategoryFilter{ParentID: p.ID}), nil
	}
	return l.children.Load(ctx, p)
}

// planChildren answers the subcategories of several roots with the fewest
// calls: one filtered list per parent (k calls), or the family's whole list
// grouped in memory (ceil(total/100) calls), whichever is cheaper given
// what is known. The family's size is learned from its first page, which
// is read only when the family could be the cheaper way; that page also
// answers every parent whose subcategories it holds completely.
func (l *Loaders) planChildren(ctx context.Context, keys []ParentKey) ([][]*restclient.Category, []error) {
	out := make([][]*restclient.Category, len(keys))
	errs := make([]error, len(keys))
	class := keys[0].Classification
	need := len(keys) // a lower bound of the family's size: the parents and their children
	for _, k := range keys {
		need += k.Count
		if k.Classification != class {
			class = ""
		}
	}
	// answerFrom answers the parents of which whose subcategories all
	// holds: all of them when all is the complete list, otherwise those whose
	// count it matches. It returns the parents left.
	answerFrom := func(all []*restclient.Category, complete bool, which []int) []int {
		groups := map[string][]*restclient.Category{}
		for _, c := range all {
			if c.Parent != nil {
				groups[c.Parent.ID] = append(groups[c.Parent.ID], c)
			}
		}
		var left []int
		for _, i := range which {
			if g := groups[keys[i].ID]; complete || len(g) == keys[i].Count {
				out[i] = nonNil(g)
			} else {
				left = append(left, i)
			}
		}
		return left
	}
	pending := make([]int, len(keys))
	for i := range keys {
		pending[i] = i
	}
	// A family read already complete or in flight (the list's look-ahead,
	// or an earlier batch of this operation) answers everything.
	if all := l.snapshot(class); all != nil {
		answerFrom(all, true, pending)
		return out, errs
	}
	if all := l.awaitFamily(ctx, class); all != nil {
		answerFrom(all, true, pending)
		return out, errs
	}

	// A family size seen before (a planning hint) replaces the lower bound:
	// that of the classification when known, else the whole family's (a
	// slice of a large family is taken to be large too).
	if size, ok := l.familySize(class); ok {
		need = max(need, size)
	} else if size, ok := l.familySize(""); ok {
		need = max(need, size)
	}
	if len(keys) >= 2 && FamilyPages(need) < len(keys) && l.Affordable(1) == nil {
		if first, err := l.familyFirstPage(ctx, class); err == nil {
			page := make([]*restclient.Category, len(first.Categories))
			for i := range first.Categories {
				page[i] = &first.Categories[i]
			}
			pending = answerFrom(page, first.Pagination.TotalCount <= len(page), pending)
			rest := FamilyPages(first.Pagination.TotalCount) - 1
			if len(pending) > 0 && rest > 0 && rest < len(pending) && l.Affordable(rest) == nil {
				if all, err := l.readFamily(ctx, class); err == nil {
					pending = answerFrom(all, true, pending)
				}
			}
		}
	}
	if len(pending) == 0 {
		return out, errs
	}

	// One filtered list per remaining parent, sent only if all fit the
	// budget.
	if err := l.Affordable(len(pending)); err != nil {
		for _, i := range pending {
			errs[i] = err
		}
		return out, errs
	}
	var wg sync.WaitGroup
	for _, i := range pending {
		wg.Go(func() {
			p, err := l.client.ListCategories(ctx, restclient.ListCategoriesOptions{
				Page: 1, PerPage: MaxBatchedChildren, ParentID: keys[i].ID,
			})
			if err != nil {
				errs[i] = err
				return
			}
			l.PrimeCategories(p.Categories)
			list := make([]*restclient.Category, len(p.Categories))
			for j := range p.Categories {
				list[j] = &p.Categories[j]
			}
			out[i] = list
		})
	}
	wg.Wait()
	return out, errs
}

func nonNil(s []*restclient.Category) []*restclient.Category {
	if s == nil {
		return []*restclient.Category{}
	}
	return s
}

// fetchParents answers several parents (always roots) at once. When the
// family is likely to fit one page, its first page (one call, shared with
// any other reader of it in this operation) answers them all; otherwise
// each costs a by-id lookup, deduplicated with every other lookup.
func (l *Loaders) fetchParents(ctx context.Context, ids []string) ([]*restclient.Category, []error) {
	return l.lookUp(ctx, ids, l.categoryByID.Load)
}

// Parent returns a category's parent (a root), batched with the other
// parents this operation needs.
func (l *Loaders) Parent(ctx context.Context, id string) (*restclient.Category, error) {
	return l.parentByID.Load(ctx, id)
}
