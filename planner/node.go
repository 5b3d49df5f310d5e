package planner

import (
	"context"
	"errors"
	"sync"
	"time"

	"suregql/restclient"
)

// MaxNodes bounds the ids of one nodes(ids:) field.
const MaxNodes = 100

// Object is what a node id names: exactly one field is set.
type Object struct {
	Category *restclient.Category
	Chat     *restclient.Chat
	Import   *restclient.Import
}

// NodeRequest is what node and nodes ask: ids already checked (canonical
// UUIDs), what the selection reads of a chat, and the operation's root
// fields that hand out categories, by response key: their answers may
// hold the ids, so the lookups wait for them (see Nodes).
type NodeRequest struct {
	IDs               []string
	Chat              ChatWant
	CategoryProducers []string
}

// remember records that this key was handed ids of kind k.
func (l *Planner) remember(k Kind, ids ...string) {
	if l.shared.Kinds != nil {
		l.shared.Kinds.remember(l.keyHash, k, ids...)
	}
}

// rememberedKind returns the kind this key was handed id as, or
// KindUnknown.
func (l *Planner) rememberedKind(id string) Kind {
	if l.shared.Kinds == nil {
		return KindUnknown
	}
	return l.shared.Kinds.kind(l.keyHash, id)
}

// Node answers one id as Nodes does.
func (l *Planner) Node(ctx context.Context, id string, chat ChatWant, categoryProducers []string) (Object, error) {
	objs, errs := l.Nodes(ctx, NodeRequest{IDs: []string{id}, Chat: chat, CategoryProducers: categoryProducers})
	return objs[0], errs[0]
}

// Nodes finds the objects the ids name, at the fewest calls:
//
//   - an id this operation's answers already hold (a category): 0 calls;
//   - an id this key was handed before (the KindMemory): the one lookup of
//     its kind; categories go through the by-id batcher, so that several
//     share the family's first page;
//   - an unknown id: a lookup of each kind it may be (category, chat,
//     import), in parallel; not a category when this operation read the
//     whole family and it was not in it.
//
// Before any lookup, the category root fields of the operation
// (req.CategoryProducers) are waited for: their answers may hold the ids
// at no call. The lookups are sent only when the budget can reserve them
// all (a *TooExpensiveError for each id otherwise, at no call), so that
// aliased node fields beside each other are each answered whole or
// refused whole. An id no lookup finds is a
// *NotFoundError of kind "node"; any other failure (401, 429, 5xx) is
// reported as itself, never as "not found".
func (l *Planner) Nodes(ctx context.Context, req NodeRequest) ([]Object, []error) {
	ids := req.IDs
	objs := make([]Object, len(ids))
	errs := make([]error, len(ids))
	kinds := make([]Kind, len(ids))
	for i, id := range ids {
		kinds[i] = l.rememberedKind(id)
	}
	if mayBeCategory(kinds) && len(req.CategoryProducers) > 0 {
		if err := l.answered.wait(ctx, req.CategoryProducers); err != nil {
			for i := range errs {
				errs[i] = err
			}
			return objs, errs
		}
	}
	p := l.probesFor(ids, kinds, objs)
	ctx, release, err := l.Reserve(ctx, p.calls(l))
	if err != nil {
		for i := range ids {
			if objs[i] == (Object{}) {
				errs[i] = err
			}
		}
		return objs, errs
	}
	defer release()
	if len(p.categories) >= 2 {
		// Planned together, at once; a single id waits batchWait for
		// the company of other root fields instead.
		l.byID.Expect(p.categories...)
	}
	found := p.run(ctx, l, ids, req.Chat)
	for i, id := range ids {
		if objs[i] != (Object{}) {
			continue
		}
		objs[i], errs[i] = found[i].outcome(id)
		if kinds[i] != KindUnknown && errs[i] != nil && isNotFound(errs[i]) {
			l.shared.Kinds.forget(l.keyHash, id) // gone upstream
		}
	}
	return objs, errs
}

func mayBeCategory(kinds []Kind) bool {
	for _, k := range kinds {
		if k == KindUnknown || k == KindCategory {
			return true
		}
	}
	return false
}

// probes are the lookups Nodes sends, by kind.
type probes struct {
	categories, chats, imports []string
	of                         [][]Kind // for each id, the kinds probed
}

// probesFor sets objs[i] for the ids this operation holds, and returns the
// lookups the others need.
func (l *Planner) probesFor(ids []string, kinds []Kind, objs []Object) probes {
	p := probes{of: make([][]Kind, len(ids))}
	familyRead := l.snapshot("") != nil
	if first := l.heldFirstPage(""); first != nil && first.Pagination.TotalCount <= len(first.Categories) {
		familyRead = true
	}
	for i, id := range ids {
		if c := l.known.get(id); c != nil {
			objs[i].Category = c
			continue
		}
		probe := []Kind{kinds[i]}
		if kinds[i] == KindUnknown {
			probe = []Kind{KindCategory, KindChat, KindImport}
		}
		for _, k := range probe {
			switch {
			case k == KindCategory && !familyRead:
				p.categories = append(p.categories, id)
			case k == KindChat:
				p.chats = append(p.chats, id)
			case k == KindImport:
				p.imports = append(p.imports, id)
			default:
				continue
			}
			p.of[i] = append(p.of[i], k)
		}
	}
	return p
}

// calls is what the probes cost at most as the by-id batcher plans them:
// two or more categories of a family not known to be large share its
// first page (ids it does not hold would cost one show each, which the
// gate still counts).
func (p probes) calls(l *Planner) int {
	cats := len(p.categories)
	if cats >= 2 && l.familyLikelySmall() {
		cats = 1
	}
	return cats + len(p.chats) + len(p.imports)
}

// found is what the probes of one id answered, by kind.
type found struct {
	obj  Object
	errs []error // of the probes that did not find it
}

func (p probes) run(ctx context.Context, l *Planner, ids []string, chat ChatWant) []found {
	out := make([]found, len(ids))
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for i, id := range ids {
		for _, k := range p.of[i] {
			wg.Go(func() {
				var (
					obj Object
					err error
				)
				defer recoverInto(&err)
				switch k {
				case KindCategory:
					obj.Category, err = l.Category(ctx, id, Want{})
				case KindChat:
					obj.Chat, err = l.Chat(ctx, id, chat)
				case KindImport:
					obj.Import, err = l.Import(ctx, id)
				}
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					out[i].errs = append(out[i].errs, err)
				} else {
					out[i].obj = obj
				}
			})
		}
	}
	wg.Wait()
	return out
}

// outcome is the object the probes found, else the first failure that is
// not "not found", else a *NotFoundError.
func (f found) outcome(id string) (Object, error) {
	if f.obj != (Object{}) {
		return f.obj, nil
	}
	for _, err := range f.errs {
		if !isNotFound(err) {
			return Object{}, err
		}
	}
	return Object{}, &NotFoundError{Kind: "node", ID: id}
}

func isNotFound(err error) bool {
	var nf *NotFoundError
	return errors.As(err, &nf)
}

// rootFields are the operation's root fields, by response key, that
// signal when they have answered (RootFieldAnswered), so that node lookups
// can use what they handed out.
type rootFields struct {
	mu   sync.Mutex
	done map[string]chan struct{}
}

func (r *rootFields) ch(field string) chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done == nil {
		r.done = map[string]chan struct{}{}
	}
	c := r.done[field]
	if c == nil {
		c = make(chan struct{})
		r.done[field] = c
	}
	return c
}

// maxRootFieldWait bounds how long node lookups wait for a root field
// that never says it answered (a resolver gqlgen did not run, say): they
// then go ahead, at the price of calls the field's answer might have
// saved. Every resolver that is waited for says so when it ends.
const maxRootFieldWait = time.Second

// wait returns once every field has answered (or maxRootFieldWait
// passed), or with ctx's error.
func (r *rootFields) wait(ctx context.Context, fields []string) error {
	limit := time.NewTimer(maxRootFieldWait)
	defer limit.Stop()
	for _, f := range fields {
		select {
		case <-r.ch(f):
		case <-limit.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// RootFieldAnswered tells node lookups waiting for the root field with
// this response key that its answer is in (the categories it handed out
// are known). Every root field that node waits for must call it once,
// however it ends; later calls do nothing.
func (l *Planner) RootFieldAnswered(field string) {
	c := l.answered.ch(field)
	l.answered.mu.Lock()
	defer l.answered.mu.Unlock()
	select {
	case <-c:
	default:
		close(c)
	}
}
