package planner

import (
	"context"
	"fmt"
	"sync"

	"github.com/suregql/suregql/restclient"
)

// NotFoundError says that the caller's family holds no category, chat or
// import with the id: the upstream answered 404, or a complete read of the
// family did not hold it.
type NotFoundError struct {
	Kind string // "category", "chat", "import"
	ID   string
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("%s %s not found", e.Kind, e.ID) }

// notFound turns an upstream 404 for a lookup into a *NotFoundError naming
// what was looked up; other errors pass unchanged.
func notFound(err error, kind, id string) error {
	if restclient.IsNotFound(err) {
		return &NotFoundError{Kind: kind, ID: id}
	}
	return err
}

// knownCategories holds every category an answer of this operation
// carried, by id: lookups of those cost nothing.
type knownCategories struct {
	mu   sync.Mutex
	byID map[string]*restclient.Category
}

func (k *knownCategories) get(id string) *restclient.Category {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.byID[id]
}

// reset forgets every category: a write made them stale.
func (k *knownCategories) reset() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.byID = nil
}

func (k *knownCategories) add(cats []restclient.Category) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.byID == nil {
		k.byID = make(map[string]*restclient.Category, len(cats))
	}
	for i := range cats {
		k.byID[cats[i].ID] = &cats[i]
	}
}

// primeCategories remembers categories from a list or show answer, so that
// later lookups by id (and of parents) cost nothing.
func (l *Planner) primeCategories(cats []restclient.Category) {
	l.learnCategories(cats)
	l.known.add(cats)
	if l.shared.Kinds != nil {
		for i := range cats {
			l.shared.Kinds.remember(l.keyHash, KindCategory, cats[i].ID)
		}
	}
}

// Category returns one category by id: from this operation's answers when
// any of them held it, else planned with every other id the operation
// looks up (see lookUp). When the selection reads its subcategories and
// the family is likely to fit one page, the family's first page answers
// both in one call (a show and a list of children would be two). What
// want names is announced for it. A category that does not exist is a
// *NotFoundError.
func (l *Planner) Category(ctx context.Context, id string, want Want) (*restclient.Category, error) {
	c := l.known.get(id)
	if c == nil && want.Subcategories && l.familyLikelySmall() && l.budget.Affordable(ctx, 1) == nil {
		first, err := l.familyFirstPage(ctx, "")
		if err != nil {
			return nil, err
		}
		if c = l.known.get(id); c == nil && first.Pagination.TotalCount <= len(first.Categories) {
			return nil, &NotFoundError{Kind: "category", ID: id}
		}
	}
	if c == nil {
		var err error
		if c, err = l.byID.Load(ctx, id); err != nil {
			return nil, notFound(err, "category", id)
		}
	}
	l.remember(KindCategory, c.ID)
	l.expect([]*restclient.Category{c}, want)
	return c, nil
}

// expectParents announces the parents of cats that no answer of this
// operation holds yet: the selection reads them, so they are looked up
// together, at once, the first time one is asked for.
func (l *Planner) expectParents(cats []*restclient.Category) {
	var ids []string
	for _, c := range cats {
		if c.Parent != nil && l.known.get(c.Parent.ID) == nil {
			ids = append(ids, c.Parent.ID)
		}
	}
	l.byID.Expect(ids...)
}

// lookUp looks several ids up at once: the byID batcher's plan. Most
// families fit one page of 100, so when two or more ids are wanted and the
// family is not known to be larger, the family's first page is read first:
// one call that may answer every id (and their parents). Ids it does not
// hold cost one GET each, in parallel.
func (l *Planner) lookUp(ctx context.Context, ids []string) ([]*restclient.Category, []error) {
	out := make([]*restclient.Category, len(ids))
	errs := make([]error, len(ids))
	// The operation's root category lists may hold them (their answers,
	// or the family's first page their look-ahead reads): plan once they
	// answered. Those lists never wait for a lookup by id.
	if err := l.answered.wait(ctx, l.operation().CategoryLists); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return out, errs
	}
	// A read of the family's first page in flight (a list's look-ahead)
	// may hold them: wait for it rather than pay a call per id.
	for _, class := range []string{"", "income", "expense"} {
		_, _, _ = l.firstPages.Wait(ctx, class)
	}
	missing := 0
	for i, id := range ids {
		if out[i] = l.known.get(id); out[i] == nil { // primed since it was asked for?
			missing++
		}
	}
	if missing >= 2 {
		l.fromFamilyFirstPage(ctx, ids, out, errs)
	}
	var wg sync.WaitGroup
	for i, id := range ids {
		if out[i] == nil && errs[i] == nil {
			wg.Go(func() {
				defer recoverInto(&errs[i])
				out[i], errs[i] = l.client.GetCategory(ctx, id)
			})
		}
	}
	wg.Wait()
	return out, errs
}

// recoverInto turns a panic of a fan-out goroutine into an error: gqlgen
// recovers panics only on a resolver's own goroutine, and any other would
// end the process.
func recoverInto(err *error) {
	if v := recover(); v != nil {
		*err = fmt.Errorf("planner: panic: %v", v)
	}
}

// fromFamilyFirstPage fills out[i] for the ids the family's first page
// holds, when the family is likely to fit that page and the budget allows
// the call. When the page holds the whole family, the other ids are not
// found, without a call each.
func (l *Planner) fromFamilyFirstPage(ctx context.Context, ids []string, out []*restclient.Category, errs []error) {
	if !l.familyLikelySmall() || l.budget.Affordable(ctx, 1) != nil {
		return
	}
	first, err := l.familyFirstPage(ctx, "")
	if err != nil {
		// One GET per id instead would multiply the calls sent to a
		// failing upstream (or a key out of quota): report the failure.
		for i := range ids {
			errs[i] = err
		}
		return
	}
	complete := first.Pagination.TotalCount <= len(first.Categories)
	for i, id := range ids {
		if out[i] == nil {
			out[i] = l.known.get(id) // the page primed what it holds
		}
		if out[i] == nil && complete {
			errs[i] = &NotFoundError{Kind: "category", ID: id}
		}
	}
}

// familyLikelySmall reports whether the caller's family is not known to
// exceed one page of 100 categories.
func (l *Planner) familyLikelySmall() bool {
	n, ok := l.familySize("")
	return !ok || n <= familyPerPage
}

// familySize returns the size of the caller's family, or of one
// classification of it, when last seen: a planning hint, possibly from an
// earlier operation. A classification not seen yet takes the whole
// family's size (a slice of a large family is taken to be large too).
func (l *Planner) familySize(class string) (int, bool) {
	if l.shared.FamilySizes == nil {
		return 0, false
	}
	if n, ok := l.shared.FamilySizes.Get(l.apiKey, class); ok || class == "" {
		return n, ok
	}
	return l.shared.FamilySizes.Get(l.apiKey, "")
}
