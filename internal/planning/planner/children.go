package planner

import (
	"context"
	"sync"

	"github.com/suregql/suregql/internal/planning/paging"
	"github.com/suregql/suregql/restclient"
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

// children returns every subcategory of a root, in the upstream's order.
// Only for counts up to MaxBatchedChildren. The roots of a page the
// planner handed out were announced (see expectChildren) and are planned
// together the first time any of them is asked for.
func (l *Planner) children(ctx context.Context, p ParentKey) ([]*restclient.Category, error) {
	if all := l.snapshot(p.Classification); all != nil {
		return filterList(all, CategoryFilter{ParentID: p.ID}), nil
	}
	return l.kids.Load(ctx, p)
}

// expectChildren announces the roots of a page whose subcategories the
// operation will ask for (roots with 1..MaxBatchedChildren of them).
func (l *Planner) expectChildren(roots []*restclient.Category) {
	keys := make([]ParentKey, 0, len(roots))
	for _, c := range roots {
		if k := parentKeyOf(c); k.Count > 0 && k.Count <= MaxBatchedChildren {
			keys = append(keys, k)
		}
	}
	l.kids.Expect(keys...)
}

// parentKeyOf names a root for the subcategory planner.
func parentKeyOf(c *restclient.Category) ParentKey {
	return ParentKey{ID: c.ID, Classification: c.Classification, Count: c.SubcategoriesCount}
}

// planParents answers the subcategories of several roots with the fewest
// calls, trying three ways in order (a batch that would pass the budget is
// refused whole):
//
//	way                   | when                                              | calls
//	----------------------|---------------------------------------------------|-----------------------
//	what is in hand       | this operation read (or is reading) the family,   | 0
//	                      | or holds a first page with a parent's whole list  |
//	a failed family read  | its pages that arrived hold a parent's whole      | 0
//	                      | list; the others get the read's error             |
//	the family's list     | 2+ parents left and ceil(family/100) pages cost   | 1, then ceil(n/100)-1
//	                      | fewer than one list each (the first page tells n) | only if still cheaper
//	one list per parent   | the parents left                                  | 1 each
//
// The family's size is bounded below by the parents and their
// subcategoriesCount, and replaced by the size seen before when known. A
// read of the family that failed upstream, in this plan or before it (the
// list's look-ahead), answers the parents whose subcategories the pages
// that arrived hold whole, and is reported for the others: no other plan
// is tried, since falling back to one list per parent, or reading the
// family again, would multiply the calls sent to an upstream that is
// failing (or to a key out of quota), or ask the budget for them.
func (l *Planner) planParents(ctx context.Context, keys []ParentKey) ([][]*restclient.Category, []error) {
	p := newChildPlan(keys)
	err := l.answerFromHand(ctx, p)
	if err == nil && !p.done() {
		err = l.answerViaFamily(ctx, p)
	}
	if err != nil {
		p.fail(err)
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
// pages it holds. When a read of the family failed upstream, it answers
// from the pages that arrived and returns the read's error for the
// parents they leave.
func (l *Planner) answerFromHand(ctx context.Context, p *childPlan) error {
	if all := l.snapshot(p.class); all != nil {
		p.answerFrom(all, true)
		return nil
	}
	if all := l.awaitFamily(ctx, p.class); all != nil {
		p.answerFrom(all, true)
		return nil
	}
	for _, c := range []string{p.class, ""} {
		if first := l.heldFirstPage(c); first != nil && !p.done() {
			p.answerFromPage(first)
		}
	}
	if f := l.failedFamily(p.class); f != nil {
		p.answerFrom(f.held, false)
		return f.err
	}
	return nil
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
	if len(p.pending) < 2 || FamilyPages(need) >= len(p.pending) || l.budget.Affordable(ctx, 1) != nil {
		return nil
	}
	first, err := l.familyFirstPage(ctx, p.class)
	if err != nil {
		return err
	}
	p.answerFromPage(first)
	rest := FamilyPages(first.Pagination.TotalCount) - 1
	if p.done() || rest <= 0 || rest >= len(p.pending) || l.budget.Affordable(ctx, rest) != nil {
		return nil
	}
	all, err := l.readFamily(ctx, p.class)
	if err != nil {
		if f := l.failedFamily(p.class); f != nil {
			p.answerFrom(f.held, false)
		}
		return err
	}
	p.answerFrom(all, true)
	return nil
}

// answerPerParent sends one filtered list per parent left, in parallel,
// only if all of them fit the budget.
func (l *Planner) answerPerParent(ctx context.Context, p *childPlan) {
	ctx, release, err := l.budget.Reserve(ctx, len(p.pending))
	if err != nil {
		p.refuseAll(err)
		return
	}
	defer release()
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
	l.primeCategories(page.Categories)
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
