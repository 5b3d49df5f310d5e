package planner

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
func (l *Planner) Children(ctx context.Context, p ParentKey) ([]*restclient.Category, error) {
	if all := l.snapshot(p.Classification); all != nil {
		return filterList(all, CategoryFilter{ParentID: p.ID}), nil
	}
	return l.children.Load(ctx, p)
}

// ExpectChildren registers the categories of a list whose subcategories
// the operation will ask for (roots with 1..MaxBatchedChildren of them).
func (l *Planner) ExpectChildren(keys []ParentKey) {
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
func (l *Planner) planChildren(ctx context.Context, keys []ParentKey) ([][]*restclient.Category, []error) {
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
// calls, trying three ways in order (a batch that would pass the budget is
// refused whole):
//
//	way                   | when                                              | calls
//	----------------------|---------------------------------------------------|-----------------------
//	what is in hand       | this operation read (or is reading) the family,   | 0
//	                      | or holds a first page with a parent's whole list  |
//	the family's list     | 2+ parents left and ceil(family/100) pages cost   | 1, then ceil(n/100)-1
//	                      | fewer than one list each (the first page tells n) | only if still cheaper
//	one list per parent   | the parents left                                  | 1 each
//
// The family's size is bounded below by the parents and their
// subcategoriesCount, and replaced by the size seen before when known. A
// read of the family that fails is reported for the parents it was to
// answer: falling back to one list per parent would multiply the calls
// sent to an upstream that is failing, or to a key out of quota.
func (l *Planner) planParents(ctx context.Context, keys []ParentKey) ([][]*restclient.Category, []error) {
	p := newChildPlan(keys)
	l.answerFromHand(ctx, p)
	if !p.done() {
		if err := l.answerViaFamily(ctx, p); err != nil {
			p.fail(err)
		}
	}
	if !p.done() {
		l.answerPerParent(ctx, p)
	}
	return p.out, p.errs
}

// childPlan is one batch of roots whose subcategories are wanted, and the
// answers found so far.
type childPlan struct {
	keys    []ParentKey
	out     [][]*restclient.Category
	errs    []error
	pending []int  // indexes of keys not answered yet
	class   string // the classification every key shares, or ""
	need    int    // a lower bound of the family's size: the parents and their children
}

func newChildPlan(keys []ParentKey) *childPlan {
	p := &childPlan{
		keys: keys, out: make([][]*restclient.Category, len(keys)), errs: make([]error, len(keys)),
		pending: make([]int, len(keys)), class: keys[0].Classification, need: len(keys),
	}
	for i, k := range keys {
		p.pending[i] = i
		p.need += k.Count
		if k.Classification != p.class {
			p.class = ""
		}
	}
	return p
}

func (p *childPlan) done() bool { return len(p.pending) == 0 }

// answerFrom answers the pending parents whose subcategories all holds:
// every one when all is the complete list, otherwise those whose count it
// matches.
func (p *childPlan) answerFrom(all []*restclient.Category, complete bool) {
	groups := map[string][]*restclient.Category{}
	for _, c := range all {
		if c.Parent != nil {
			groups[c.Parent.ID] = append(groups[c.Parent.ID], c)
		}
	}
	var left []int
	for _, i := range p.pending {
		if g := groups[p.keys[i].ID]; complete || len(g) == p.keys[i].Count {
			p.out[i] = nonNil(g)
		} else {
			left = append(left, i)
		}
	}
	p.pending = left
}

// answerFromPage answers from a first page of the family, which is the
// complete list when the family fits it.
func (p *childPlan) answerFromPage(first *restclient.CategoryPage) {
	p.answerFrom(pointers(first.Categories), first.Pagination.TotalCount <= len(first.Categories))
}

// fail answers the pending parents with err.
func (p *childPlan) fail(err error) {
	for _, i := range p.pending {
		p.errs[i] = err
	}
	p.pending = nil
}

// refuseAll answers every parent of the batch with err, also those a page
// in hand happened to answer: the client sees one level of the tree either
// answered or refused, never a scattering of both.
func (p *childPlan) refuseAll(err error) {
	for i := range p.keys {
		p.out[i], p.errs[i] = nil, err
	}
	p.pending = nil
}

// answerFromHand answers, at no call, from a family read this operation
// completed or has in flight (the list's look-ahead), else from the first
// pages it holds.
func (l *Planner) answerFromHand(ctx context.Context, p *childPlan) {
	if all := l.snapshot(p.class); all != nil {
		p.answerFrom(all, true)
		return
	}
	if all := l.awaitFamily(ctx, p.class); all != nil {
		p.answerFrom(all, true)
		return
	}
	for _, c := range []string{p.class, ""} {
		if first := l.heldFirstPage(c); first != nil && !p.done() {
			p.answerFromPage(first)
		}
	}
}

// answerViaFamily reads the family's first page when the family could be
// cheaper than one list per parent left, then the rest of it only while
// still cheaper and affordable. It returns the error of a read that
// failed.
func (l *Planner) answerViaFamily(ctx context.Context, p *childPlan) error {
	need := p.need
	if size, ok := l.familySize(p.class); ok {
		need = max(need, size) // a planning hint from an earlier operation
	}
	if len(p.pending) < 2 || FamilyPages(need) >= len(p.pending) || l.Affordable(1) != nil {
		return nil
	}
	first, err := l.familyFirstPage(ctx, p.class)
	if err != nil {
		return err
	}
	p.answerFromPage(first)
	rest := FamilyPages(first.Pagination.TotalCount) - 1
	if p.done() || rest <= 0 || rest >= len(p.pending) || l.Affordable(rest) != nil {
		return nil
	}
	all, err := l.readFamily(ctx, p.class)
	if err != nil {
		return err
	}
	p.answerFrom(all, true)
	return nil
}

// answerPerParent sends one filtered list per parent left, in parallel,
// only if all of them fit the budget.
func (l *Planner) answerPerParent(ctx context.Context, p *childPlan) {
	if err := l.Affordable(len(p.pending)); err != nil {
		p.refuseAll(err)
		return
	}
	var wg sync.WaitGroup
	for _, i := range p.pending {
		wg.Go(func() { p.out[i], p.errs[i] = l.childrenOf(ctx, p.keys[i].ID) })
	}
	wg.Wait()
	p.pending = nil
}

// childrenOf reads one root's subcategories with a filtered list: one page
// of up to 100, and the rest when the server's page held fewer.
func (l *Planner) childrenOf(ctx context.Context, parentID string) (list []*restclient.Category, err error) {
	defer recoverInto(&err)
	page, err := l.client.ListCategories(ctx, restclient.ListCategoriesOptions{
		Page: 1, PerPage: MaxBatchedChildren, ParentID: parentID,
	})
	if err != nil {
		return nil, err
	}
	l.PrimeCategories(page.Categories)
	if total := page.Pagination.TotalCount; total > len(page.Categories) {
		f := CategoryFilter{ParentID: parentID}
		res, err := paging.Load(ctx, paging.Range(f.List(), 0, total).WithKnownTotal(total), l.categorySource(f))
		return res.Items, err
	}
	return pointers(page.Categories), nil
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
func (l *Planner) fetchParents(ctx context.Context, ids []string) ([]*restclient.Category, []error) {
	return l.lookUp(ctx, ids, l.categoryByID.Load)
}

// Parent returns a category's parent (a root), batched with the other
// parents this operation needs.
func (l *Planner) Parent(ctx context.Context, id string) (*restclient.Category, error) {
	return l.parentByID.Load(ctx, id)
}
