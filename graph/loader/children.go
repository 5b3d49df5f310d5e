package loader

import (
	"context"
	"sync"

	"suregql/paging"
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
// Only for counts up to MaxBatchedChildren. The subcategories of every
// category a list registered with ExpectChildren are planned together, the
// first time any of them is asked for, so that one operation always gets
// the same plan; others are batched by the dataloader.
func (l *Loaders) Children(ctx context.Context, p ParentKey) ([]*restclient.Category, error) {
	if all := l.snapshot(p.Classification); all != nil {
		return filterList(all, CategoryFilter{ParentID: p.ID}), nil
	}
	return l.children.Load(ctx, p)
}

// ExpectChildren registers the categories of a list whose subcategories
// the operation will ask for (roots with 1..MaxBatchedChildren of them).
func (l *Loaders) ExpectChildren(keys []ParentKey) {
	l.kids.mu.Lock()
	defer l.kids.mu.Unlock()
	for _, k := range keys {
		if k.Count > 0 && k.Count <= MaxBatchedChildren && l.kids.entries[k.ID] == nil {
			l.kids.expected[k.ID] = k
		}
	}
}

// childrenState holds the subcategory lists of one operation by parent.
type childrenState struct {
	mu       sync.Mutex
	entries  map[string]*childEntry
	expected map[string]ParentKey // registered, not planned yet
}

type childEntry struct {
	done chan struct{}
	list []*restclient.Category
	err  error
}

// planChildren is the dataloader's batch function: it claims the batch's
// parents and every registered one not yet planned, plans those together,
// and waits for the others (planned by a concurrent batch).
func (l *Loaders) planChildren(ctx context.Context, keys []ParentKey) ([][]*restclient.Category, []error) {
	var owned []ParentKey
	var mine []*childEntry
	l.kids.mu.Lock()
	claim := func(k ParentKey) {
		if l.kids.entries[k.ID] != nil {
			return
		}
		e := &childEntry{done: make(chan struct{}), err: errFetchAborted}
		l.kids.entries[k.ID] = e
		owned = append(owned, k)
		mine = append(mine, e)
	}
	for _, k := range keys {
		claim(k)
	}
	for _, k := range l.kids.expected {
		claim(k)
	}
	clear(l.kids.expected)
	entries := make([]*childEntry, len(keys))
	for i, k := range keys {
		entries[i] = l.kids.entries[k.ID]
	}
	l.kids.mu.Unlock()

	if len(owned) > 0 {
		func() {
			defer func() {
				for _, e := range mine {
					close(e.done)
				}
			}()
			lists, errs := l.planParents(ctx, owned)
			for i, e := range mine {
				e.list, e.err = lists[i], errs[i]
			}
		}()
	}
	out := make([][]*restclient.Category, len(keys))
	errs := make([]error, len(keys))
	for i, e := range entries {
		select {
		case <-e.done:
			out[i], errs[i] = e.list, e.err
		case <-ctx.Done():
			errs[i] = ctx.Err()
		}
	}
	return out, errs
}

// planParents answers the subcategories of several roots with the fewest
// calls: from the family's first page when this operation holds it (free),
// then one filtered list per parent (k calls) or the family's whole list
// grouped in memory (ceil(total/100) calls), whichever is cheaper given
// what is known: subcategoriesCount, and the family's size when seen
// before. When the size is unknown and the family could be the cheaper way,
// its first page is read: it tells the size, and answers every parent whose
// subcategories it holds completely. A batch that would pass the budget is
// refused whole.
func (l *Loaders) planParents(ctx context.Context, keys []ParentKey) ([][]*restclient.Category, []error) {
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
	// A family read already complete or in flight (the list's look-ahead)
	// answers everything.
	if all := l.snapshot(class); all != nil {
		answerFrom(all, true, pending)
		return out, errs
	}
	if all := l.awaitFamily(ctx, class); all != nil {
		answerFrom(all, true, pending)
		return out, errs
	}
	// A first page this operation already holds answers, for free, the
	// parents whose subcategories it holds completely.
	for _, c := range []string{class, ""} {
		if first := l.heldFirstPage(c); first != nil && len(pending) > 0 {
			pending = answerFrom(pointers(first.Categories), first.Pagination.TotalCount <= len(first.Categories), pending)
		}
	}
	if len(pending) == 0 {
		return out, errs
	}
	// A family size seen before (a planning hint) replaces the lower bound.
	if size, ok := l.familySize(class); ok {
		need = max(need, size)
	}
	// failed answers the parents left with the error of the read meant to
	// answer them. Falling back to one list per parent would multiply the
	// calls sent to an upstream that is failing, or to a key out of quota.
	failed := func(err error) ([][]*restclient.Category, []error) {
		for _, i := range pending {
			errs[i] = err
		}
		return out, errs
	}
	if len(pending) >= 2 && FamilyPages(need) < len(pending) && l.Affordable(1) == nil {
		first, err := l.familyFirstPage(ctx, class)
		if err != nil {
			return failed(err)
		}
		pending = answerFrom(pointers(first.Categories), first.Pagination.TotalCount <= len(first.Categories), pending)
		rest := FamilyPages(first.Pagination.TotalCount) - 1
		if len(pending) > 0 && rest > 0 && rest < len(pending) && l.Affordable(rest) == nil {
			all, err := l.readFamily(ctx, class)
			if err != nil {
				return failed(err)
			}
			pending = answerFrom(all, true, pending)
		}
	}
	if len(pending) == 0 {
		return out, errs
	}

	// One filtered list per remaining parent, sent only if all fit the
	// budget. A refused batch is refused whole, also the parents a page in
	// hand happened to answer: the client sees one level of the tree either
	// answered or refused, never a scattering of both.
	if err := l.Affordable(len(pending)); err != nil {
		for i := range keys {
			out[i], errs[i] = nil, err
		}
		return out, errs
	}
	var wg sync.WaitGroup
	for _, i := range pending {
		wg.Go(func() {
			defer recoverInto(&errs[i])
			p, err := l.client.ListCategories(ctx, restclient.ListCategoriesOptions{
				Page: 1, PerPage: MaxBatchedChildren, ParentID: keys[i].ID,
			})
			if err != nil {
				errs[i] = err
				return
			}
			l.PrimeCategories(p.Categories)
			out[i] = pointers(p.Categories)
			if total := p.Pagination.TotalCount; total > len(p.Categories) {
				// The server's page held fewer than asked: read the rest.
				f := CategoryFilter{ParentID: keys[i].ID}
				res, err := paging.Load(ctx, paging.Range(f.List(), 0, total).WithKnownTotal(total), l.categorySource(f))
				out[i], errs[i] = res.Items, err
			}
		})
	}
	wg.Wait()
	return out, errs
}

func pointers(cats []restclient.Category) []*restclient.Category {
	out := make([]*restclient.Category, len(cats))
	for i := range cats {
		out[i] = &cats[i]
	}
	return out
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
