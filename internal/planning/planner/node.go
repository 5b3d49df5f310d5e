package planner

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/suregql/suregql/internal/planning/flight"
	"github.com/suregql/suregql/restclient"
	"github.com/suregql/suregql/restclient/resource"
)

// MaxNodes bounds the ids of one nodes(ids:) field.
const MaxNodes = 100

// Object is what a node id names: one of Category, Chat, ChatSummary or
// Spec is set.
type Object struct {
	Category *restclient.Category
	Chat     *restclient.Chat
	// ChatSummary: found in the key's chat list, for a selection that
	// reads nothing the list does not send (NodeAsk.Summaries); what it
	// lacks is looked up when read.
	ChatSummary *restclient.ChatSummary
	// Spec names the described resource (restclient.Collections) of an
	// object found by its show (Shown, a *S of its collection) or, for a
	// selection that reads nothing the list does not send, in its list
	// (Listed, a *L).
	Spec   *resource.Spec
	Shown  any
	Listed any
}

// NodeAsk is one node or nodes field of an operation: its ids (canonical
// UUIDs), what its selection reads of a chat's messages, and whether it
// reads nothing of a chat or an import that their lists do not send (a
// chat's messages; an import's configuration, stats beyond the row count,
// or status detail), so that an element of the list may answer it.
type NodeAsk struct {
	IDs       []string
	Chat      ChatWant
	Summaries bool
}

// NodeRequest is what node and nodes ask: ids already checked (canonical
// UUIDs), and what the selection reads of a chat (and whether a list's
// summary answers it, as NodeAsk).
type NodeRequest struct {
	IDs       []string
	Chat      ChatWant
	Summaries bool
}

// remember records that this key was handed ids of kind k.
func (l *Planner) remember(k Kind, ids ...string) {
	if l.shared.Kinds != nil {
		l.shared.Kinds.remember(l.keyHash, k, ids...)
	}
}

// rememberedKind returns the kind this key was handed id as, KindNone
// when it was told the id names nothing, or KindUnknown.
func (l *Planner) rememberedKind(id string) Kind {
	if l.shared.Kinds == nil {
		return KindUnknown
	}
	return l.shared.Kinds.kindAt(l.keyHash, id, l.shared.now())
}

// nodesWritten is told by chatsWritten and categoriesWritten that this key
// may have written: an object it created may bear an id it was told names
// nothing, so those are forgotten, with the node answers of this request.
func (l *Planner) nodesWritten() {
	if l.shared.Kinds != nil {
		l.shared.Kinds.forgetNotFound(l.keyHash)
	}
	l.nodes.forget()
}

// expectNodes announces the node and nodes fields of the operation: the
// first of them that asks plans every announced id at once (Nodes), so
// that the operation's node lookups are reserved as one batch, answered
// whole or refused whole.
func (l *Planner) expectNodes(asks ...NodeAsk) {
	var keys []nodeKey
	var summaries []bool
	for _, a := range asks {
		for _, id := range a.IDs {
			keys = append(keys, nodeKey{id: id, chat: a.Chat})
			summaries = append(summaries, a.Summaries)
		}
	}
	l.nodes.expect(keys, summaries, true)
}

// Node answers one id as Nodes does.
func (l *Planner) Node(ctx context.Context, id string, chat ChatWant) (Object, error) {
	objs, errs := l.Nodes(ctx, NodeRequest{IDs: []string{id}, Chat: chat})
	return objs[0], errs[0]
}

// Nodes finds the objects the ids name. The ids of every node field of the
// operation (announced by Begin, else those of the fields that ask
// together) are planned at once, and their lookups reserved as one batch
// before any is sent: when the budget cannot hold them all, every id that
// needs a call is refused (a *TooExpensiveError) at no call. The plan,
// at the fewest calls (see nodeRun.plan for the rules):
//
//   - an id this operation's answers already hold (a category): 0 calls;
//   - an id this key was told names nothing (every lookup answered 404,
//     within notFoundTTL, since its last write): null, 0 calls;
//   - categories (of a kind remembered, or not known): the family's first
//     page, one call for all of them (0 when the operation holds it), or
//     in a family known to be larger, one show each or the whole family,
//     whichever costs fewer calls;
//   - then, for the ids still unknown and those of a remembered chat or
//     import kind: one show each, or the kind's whole list (pages of 20
//     chats, 100 imports) when that costs fewer calls and the selection
//     reads nothing the list does not send.
//
// Before any lookup, the category root fields of the operation
// (Operation.CategoryLists and CategoryFields) are waited for: their answers may hold the ids
// at no call. An id no lookup finds is a *NotFoundError of kind "node";
// any other failure (401, 429, 5xx) is reported as itself, never as "not
// found".
func (l *Planner) Nodes(ctx context.Context, req NodeRequest) ([]Object, []error) {
	keys := make([]nodeKey, len(req.IDs))
	summaries := make([]bool, len(req.IDs))
	for i, id := range req.IDs {
		keys[i] = nodeKey{id: id, chat: req.Chat}
		summaries[i] = req.Summaries
	}
	l.nodes.expect(keys, summaries, false)
	op := l.operation()
	groups := l.nodes.claim(keys, slices.Concat(op.CategoryLists, op.CategoryFields))
	objs := make([]Object, len(keys))
	errs := make([]error, len(keys))
	for i, k := range keys {
		g := groups[i]
		_, err := l.nodes.runs.Do(ctx, g, func(ctx context.Context) (struct{}, error) {
			g.objs, g.errs = l.planNodes(ctx, g)
			return struct{}{}, nil
		})
		if err != nil { // the plan panicked, or ctx ended while waiting
			errs[i] = err
			continue
		}
		j := g.index[k]
		objs[i], errs[i] = g.objs[j], g.errs[j]
	}
	return objs, errs
}

// nodeKey is one id a node field asks, with what that field reads of a
// chat's messages (which page a chat's show answer carries).
type nodeKey struct {
	id   string
	chat ChatWant
}

// nodeBatch gathers the node ids of a request into groups planned at once,
// as batcher does for categories: announced ids join the first group
// made, and every id is planned once per request (until a write).
type nodeBatch struct {
	mu        sync.Mutex
	announced []nodeKey
	summaries map[nodeKey]bool // of each key announced or planned
	groupOf   map[nodeKey]*nodeGroup
	runs      flight.Once[*nodeGroup, struct{}]
}

// nodeGroup is a set of keys planned together, and their answers.
type nodeGroup struct {
	keys      []nodeKey
	summaries []bool
	producers []string
	index     map[nodeKey]int
	objs      []Object
	errs      []error
}

// expect announces keys. An announcement of the operation's fields
// (override) decides whether a key not planned yet takes a list's summary:
// only when every field asking it does; a field's own ask (not override)
// does not change what was announced.
func (b *nodeBatch) expect(keys []nodeKey, summaries []bool, override bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.summaries == nil {
		b.summaries = map[nodeKey]bool{}
	}
	seen := map[nodeKey]bool{}
	for i, k := range keys {
		if b.groupOf[k] != nil {
			continue
		}
		s, known := b.summaries[k]
		switch {
		case !known:
			b.summaries[k] = summaries[i]
			b.announced = append(b.announced, k)
		case override && seen[k]:
			b.summaries[k] = s && summaries[i] // two fields of this announcement
		case override:
			b.summaries[k] = summaries[i]
		}
		seen[k] = true
	}
}

// claim returns the group of each key, making one group of the keys no
// group holds yet and every announced key.
func (b *nodeBatch) claim(keys []nodeKey, producers []string) []*nodeGroup {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.groupOf == nil {
		b.groupOf = map[nodeKey]*nodeGroup{}
	}
	var g *nodeGroup
	for _, k := range slices.Concat(keys, b.announced) {
		if b.groupOf[k] != nil {
			continue
		}
		if g == nil {
			g = &nodeGroup{producers: producers, index: map[nodeKey]int{}}
		}
		b.groupOf[k] = g
		g.index[k] = len(g.keys)
		g.keys = append(g.keys, k)
		g.summaries = append(g.summaries, b.summaries[k])
	}
	b.announced = b.announced[:0]
	out := make([]*nodeGroup, len(keys))
	for i, k := range keys {
		out[i] = b.groupOf[k]
	}
	return out
}

// forget drops every answer and announcement: a write made them stale.
// Callers already waiting keep the answers they wait for.
func (b *nodeBatch) forget() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.announced, b.summaries, b.groupOf = nil, nil, nil
}

// nodeState is what the plan knows of one id of a group.
type nodeState struct {
	id        string
	kind      Kind  // as remembered for this key
	keys      []int // the group's keys of this id
	summaries bool  // every key of the id takes a list's summary
	found     bool
	err       error // the first failure that is not "not found"
	absent    kinds // kinds the id was told not to be
	unsure    bool  // an absence that must not be remembered
}

// kinds is a set of kinds (of at most 63 resources).
type kinds uint64

func kindSet(ks ...Kind) kinds {
	var set kinds
	for _, k := range ks {
		set |= 1 << k
	}
	return set
}

// everyKind is the set of every resource's kind.
func everyKind() kinds {
	var set kinds
	for _, spec := range resource.All {
		set |= kindSet(KindOf(spec))
	}
	return set
}

// told reports whether s was told it is none of the kinds it may be.
func (s *nodeState) told() bool {
	may := kindSet(s.kind)
	if s.kind == KindUnknown {
		may = everyKind()
	}
	return s.absent&may == may
}

// nodeRun is the plan of one group.
type nodeRun struct {
	l    *Planner
	keys []nodeKey
	objs []Object
	errs []error

	mu  sync.Mutex // guards the states and objs during the lookups
	ids []*nodeState
}

func (l *Planner) planNodes(ctx context.Context, g *nodeGroup) ([]Object, []error) {
	r := &nodeRun{l: l, keys: g.keys, objs: make([]Object, len(g.keys)), errs: make([]error, len(g.keys))}
	byID := map[string]*nodeState{}
	for i, k := range g.keys {
		s := byID[k.id]
		if s == nil {
			s = &nodeState{id: k.id, kind: l.rememberedKind(k.id), summaries: true}
			byID[k.id] = s
			r.ids = append(r.ids, s)
		}
		s.keys = append(s.keys, i)
		s.summaries = s.summaries && g.summaries[i]
	}
	if len(g.producers) > 0 && r.mayBeCategory() {
		if err := l.answered.wait(ctx, g.producers); err != nil {
			for i := range r.errs {
				r.errs[i] = err
			}
			return r.objs, r.errs
		}
	}
	r.plan(ctx)
	return r.objs, r.errs
}

// mayBeCategory reports whether an id of the run may be a category that
// no answer of the operation holds yet.
func (r *nodeRun) mayBeCategory() bool {
	for _, s := range r.ids {
		if (s.kind == KindUnknown || s.kind == KindCategory) && r.l.known.get(s.id) == nil {
			return true
		}
	}
	return false
}

// plan answers the run's ids:
//
//  1. held by the operation, or told "not found" before: at no call;
//  2. the whole plan's calls, at most, reserved at once (nodeRun.calls);
//  3. the ids that may be categories (kind unknown or category):
//     categoryStage; then the ids still unknown and those of any other
//     kind: chatStage and a describedStage per described resource, in
//     parallel (when no id is unknown, every stage runs at once: none
//     waits for another's answer);
//  4. an id every kind it may be was told not to be is remembered as
//     such (KindNone), unless an absence was not certain.
func (r *nodeRun) plan(ctx context.Context) {
	l := r.l
	var open []*nodeState
	for _, s := range r.ids {
		switch c := l.known.get(s.id); {
		case c != nil:
			r.foundAll(s, Object{Category: c})
		case s.kind == KindNone:
			// Told before: null, at no call.
		default:
			open = append(open, s)
		}
	}
	if len(open) > 0 {
		ctx, release, err := l.budget.Reserve(ctx, r.calls(open))
		if err != nil {
			for _, s := range open {
				r.fail(s, KindUnknown, err)
			}
		} else {
			r.lookUp(ctx, open)
			release()
		}
	}
	var none []string
	for _, s := range r.ids {
		for _, i := range s.keys {
			switch {
			case r.objs[i] != (Object{}):
			case s.err != nil:
				r.errs[i] = s.err
			default:
				r.errs[i] = &NotFoundError{Kind: "node", ID: s.id}
			}
		}
		if !s.found && s.err == nil && !s.unsure && s.kind != KindNone && s.told() {
			none = append(none, s.id)
		}
	}
	if len(none) > 0 && l.shared.Kinds != nil {
		l.shared.Kinds.toldNotFound(l.keyHash, l.shared.now(), none...)
	}
}

// lookUp runs the stages for the open ids, within their reservation.
func (r *nodeRun) lookUp(ctx context.Context, open []*nodeState) {
	cats, unknown := r.split(open)
	if !unknown {
		var wg sync.WaitGroup
		wg.Go(func() { r.categoryStage(ctx, cats) })
		wg.Go(func() { r.otherStages(ctx, open) })
		wg.Wait()
		return
	}
	r.categoryStage(ctx, cats)
	r.otherStages(ctx, open)
}

// split returns the open ids that may be categories, and whether any id
// is of a kind not known.
func (r *nodeRun) split(open []*nodeState) (cats []*nodeState, unknown bool) {
	for _, s := range open {
		if s.kind == KindUnknown || s.kind == KindCategory {
			cats = append(cats, s)
		}
		unknown = unknown || s.kind == KindUnknown
	}
	return cats, unknown
}

// others returns the open ids of kind k, and the unknown ones not found
// yet.
func (r *nodeRun) others(open []*nodeState, k Kind) []*nodeState {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*nodeState
	for _, s := range open {
		if s.kind == k || (s.kind == KindUnknown && !s.found) {
			out = append(out, s)
		}
	}
	return out
}

// nodeStage is how node lookups find the ids that may be of one kind
// (every kind but categories, whose stage runs first: categoryStage).
type nodeStage struct {
	// calls is the most the stage costs for ids.
	calls func(r *nodeRun, ids []*nodeState) int
	// run looks ids up.
	run func(ctx context.Context, r *nodeRun, ids []*nodeState)
}

// nodeHooks are the stages planned by hand, by description: chats (a
// show per field asking, for the page of messages each reads). Every
// other resource of resource.All is looked up by its description
// (describedStage).
var nodeHooks = map[*resource.Spec]nodeStage{
	resource.Chats: {
		calls: func(r *nodeRun, ids []*nodeState) int {
			listed, shown := r.chatPlan(ids)
			return r.listCalls(KindChat, listed) + r.chatShows(shown)
		},
		run: func(ctx context.Context, r *nodeRun, ids []*nodeState) { r.chatStage(ctx, ids) },
	},
}

// stageOf returns the node stage of a resource other than categories:
// its hook, or the generic stage of its collection; ok is false for a
// resource with neither (no object of it is a node).
func stageOf(spec *resource.Spec) (nodeStage, bool) {
	if h, ok := nodeHooks[spec]; ok {
		return h, true
	}
	c := restclient.CollectionOf(spec)
	if c == nil {
		return nodeStage{}, false
	}
	return nodeStage{
		calls: func(r *nodeRun, ids []*nodeState) int {
			listed, shown := r.describedPlan(c, ids)
			return r.listCalls(KindOf(spec), listed) + len(shown)
		},
		run: func(ctx context.Context, r *nodeRun, ids []*nodeState) { r.describedStage(ctx, c, ids) },
	}, true
}

// otherStages runs the stage of every kind but categories, over the
// registry of resources, in parallel.
func (r *nodeRun) otherStages(ctx context.Context, open []*nodeState) {
	// Each stage's ids are taken before any stage starts: an unknown id
	// is asked of every kind, even one another stage finds meanwhile.
	type planned struct {
		stage nodeStage
		ids   []*nodeState
	}
	var stages []planned
	for _, spec := range resource.All {
		if st, ok := stageOf(spec); ok && spec != resource.Categories {
			stages = append(stages, planned{st, r.others(open, KindOf(spec))})
		}
	}
	var wg sync.WaitGroup
	for _, p := range stages {
		wg.Go(func() { p.stage.run(ctx, r, p.ids) })
	}
	wg.Wait()
}

// calls is the most the lookups of the open ids cost: each stage as it
// plans them when every unknown id reaches it (none is a category). An
// id of no kind known costs at most the family's first page, and for
// each other kind its list's first page or a show (a show per field
// asking it for chats): a bound that grows by one per kind.
func (r *nodeRun) calls(open []*nodeState) int {
	cats, _ := r.split(open)
	n := r.l.categoryCalls(len(cats))
	for _, spec := range resource.All {
		if st, ok := stageOf(spec); ok && spec != resource.Categories {
			n += st.calls(r, r.others(open, KindOf(spec)))
		}
	}
	return n
}

// foundAll answers every key of s with obj.
func (r *nodeRun) foundAll(s *nodeState, obj Object) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s.found = true
	for _, i := range s.keys {
		r.objs[i] = obj
	}
}

// foundKey answers key i of s with obj.
func (r *nodeRun) foundKey(s *nodeState, i int, obj Object) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s.found = true
	r.objs[i] = obj
}

// notFound records that s is not of kind k; sure is false when the
// answer does not prove it (a 404 no controller of the API sent).
func (r *nodeRun) notFound(s *nodeState, k Kind, sure bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s.absent |= kindSet(k)
	s.unsure = s.unsure || !sure
}

// fail records a lookup of s as kind k that failed: a "not found" says
// it is not of the kind.
func (r *nodeRun) fail(s *nodeState, k Kind, err error) {
	if isNotFound(err) || restclient.IsNotFound(err) {
		r.notFound(s, k, !restclient.IsNoRoute(err))
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// The category stage: every id that may be a category.
//
//   - the family held whole by the operation: answered from it;
//   - a family not known to be larger than a page: its first page (one
//     call, once per operation), which answers every id it holds and, when
//     it holds the whole family, that the others are no categories;
//   - a larger family (known, or found so by the first page): the whole
//     family when its pages are fewer than the ids left, else one show
//     each. Calls past the plan's reservation (a family found larger than
//     a page) are reserved apart, whole.
func (r *nodeRun) categoryStage(ctx context.Context, cats []*nodeState) {
	if len(cats) == 0 {
		return
	}
	l := r.l
	if !l.familyHeld() {
		if n, ok := l.nodeFamilySize(); !ok || n <= familyPerPage {
			if _, err := l.familyFirstPage(ctx, ""); err != nil {
				// One show per id instead would multiply the calls
				// sent to a failing upstream: report the failure.
				for _, s := range cats {
					r.fail(s, KindCategory, err)
				}
				return
			}
		}
	}
	left := r.fromFamily(cats)
	if len(left) == 0 {
		return
	}
	if n, ok := l.nodeFamilySize(); ok && familyPagesLeft(l, n) < len(left) {
		if _, err := l.readFamily(ctx, ""); err != nil {
			for _, s := range left {
				r.fail(s, KindCategory, err)
			}
			return
		}
		if left = r.fromFamily(left); len(left) == 0 {
			return
		}
	}
	r.shows(ctx, KindCategory, len(left), left, func(ctx context.Context, s *nodeState) error {
		c, err := l.client.GetCategory(ctx, s.id)
		if err != nil {
			return err
		}
		l.remember(KindCategory, c.ID)
		r.foundAll(s, Object{Category: c})
		return nil
	})
}

// fromFamily answers the ids the operation's answers hold and, when it
// holds the whole family, says the others are no categories; it returns
// the ids left.
func (r *nodeRun) fromFamily(cats []*nodeState) (left []*nodeState) {
	whole := r.l.familyHeld()
	for _, s := range cats {
		switch c := r.l.known.get(s.id); {
		case c != nil:
			r.l.remember(KindCategory, c.ID)
			r.foundAll(s, Object{Category: c})
		case whole:
			r.notFound(s, KindCategory, true)
		default:
			left = append(left, s)
		}
	}
	return left
}

// familyHeld reports whether the operation holds the whole family.
func (l *Planner) familyHeld() bool {
	if l.snapshot("") != nil {
		return true
	}
	first := l.heldFirstPage("")
	return first != nil && first.Pagination.TotalCount <= len(first.Categories)
}

// nodeFamilySize is the family's size as the operation's first page or
// an earlier operation told it.
func (l *Planner) nodeFamilySize() (int, bool) {
	if first := l.heldFirstPage(""); first != nil {
		return first.Pagination.TotalCount, true
	}
	return l.familySize("")
}

// familyPagesLeft is how many calls a read of a family of n categories
// still costs.
func familyPagesLeft(l *Planner, n int) int {
	pages := FamilyPages(n)
	if l.heldFirstPage("") != nil {
		pages--
	}
	return pages
}

// categoryCalls is the most the category stage costs for n ids.
func (l *Planner) categoryCalls(n int) int {
	if n == 0 || l.familyHeld() {
		return 0
	}
	size, ok := l.nodeFamilySize()
	if !ok || size <= familyPerPage {
		return 1 // the first page; a family it shows larger is reserved apart
	}
	return min(n, familyPagesLeft(l, size))
}

// The chat and described stages: every id of that kind, and every unknown id
// no earlier stage found. The ids whose selection takes a list's summary
// are settled by the kind's whole list when its pages (as this key's last
// read of the list told, else one) are fewer than those ids; the others,
// by one show each (a chat's per field asking it: each carries the page
// of messages that field reads).

func (r *nodeRun) chatStage(ctx context.Context, ids []*nodeState) {
	listed, shown := r.chatPlan(ids)
	l := r.l
	shown = append(shown, listChats(ctx, r, listed)...)
	r.shows(ctx, KindChat, r.chatShows(shown), shown, func(ctx context.Context, s *nodeState) error {
		var wg sync.WaitGroup
		for _, i := range s.keys {
			wg.Go(func() {
				var err error
				defer func() {
					if err != nil {
						r.fail(s, KindChat, err)
					}
				}()
				defer recoverInto(&err)
				var c *restclient.Chat
				if c, err = l.Chat(ctx, s.id, r.keys[i].chat); err == nil {
					r.foundKey(s, i, Object{Chat: c})
				}
			})
		}
		wg.Wait()
		return nil
	})
}

// describedStage looks ids up as objects of a described resource: by
// its list, or one show each.
func (r *nodeRun) describedStage(ctx context.Context, c restclient.Described, ids []*nodeState) {
	spec := c.Describes()
	k := KindOf(spec)
	listed, shown := r.describedPlan(c, ids)
	l := r.l
	shown = append(shown, listDescribed(ctx, r, c, listed)...)
	r.shows(ctx, k, len(shown), shown, func(ctx context.Context, s *nodeState) error {
		obj, err := l.show(ctx, c, s.id)
		if err != nil {
			return err
		}
		r.foundAll(s, Object{Spec: spec, Shown: obj})
		return nil
	})
}

// chatPlan splits ids into those the chat list settles and those shown.
func (r *nodeRun) chatPlan(ids []*nodeState) (listed, shown []*nodeState) {
	return r.listOrShow(KindChat, ids, true)
}

// describedPlan splits ids into those the resource's list settles and
// those shown. When an element of the list is the object whole
// (Collection.FromList), the list settles them all whenever its pages are
// no more than the ids (one read for any number of them, in a family's
// few accounts), and always on a server without the show.
func (r *nodeRun) describedPlan(c restclient.Described, ids []*nodeState) (listed, shown []*nodeState) {
	spec := c.Describes()
	k := KindOf(spec)
	listable := spec.List != "" && r.l.listMissing(spec) == nil
	if listable && c.ListStandsForShow() && (r.l.showMissing(spec) || r.listCalls(k, ids) <= len(ids)) {
		return ids, nil
	}
	return r.listOrShow(k, ids, listable)
}

func (r *nodeRun) listOrShow(k Kind, ids []*nodeState, listable bool) (listed, shown []*nodeState) {
	for _, s := range ids {
		if s.summaries && listable {
			listed = append(listed, s)
		} else {
			shown = append(shown, s)
		}
	}
	if len(listed) <= r.listCalls(k, listed) {
		return nil, ids // a show each costs no more
	}
	return listed, shown
}

// chatShows is how many shows the chat ids need: one per key.
func (r *nodeRun) chatShows(ids []*nodeState) int {
	n := 0
	for _, s := range ids {
		n += len(s.keys)
	}
	return n
}

// listPages is how many pages a node lookup reads of a list of kind k
// that holds n objects: pages of the largest size its paging allows (one
// for an unpaginated list).
func listPages(k Kind, n int) int {
	size := k.Spec().Paging.Largest()
	if size <= 0 {
		return 1
	}
	return max(1, (n+size-1)/size)
}

// listCalls is how many pages of the list of kind k a read costs, as
// this key's last read of it told (one when never read, or no id needs
// it).
func (r *nodeRun) listCalls(k Kind, ids []*nodeState) int {
	if len(ids) == 0 {
		return 0
	}
	if r.l.shared.Kinds != nil {
		if n, ok := r.l.shared.Kinds.listSize(r.l.keyHash, k); ok {
			return listPages(k, n)
		}
	}
	return 1
}

// listPage is one page of a list read by node: its elements, by id, and
// the list's length it reported.
type listPage[T any] struct {
	items map[string]T
	total int
}

// listChats settles ids by the chat list, and returns those it does not.
func listChats(ctx context.Context, r *nodeRun, ids []*nodeState) []*nodeState {
	return readList(ctx, r, KindChat, ids, func(ctx context.Context, page int) (listPage[*restclient.ChatSummary], error) {
		p, err := r.l.client.ListChats(ctx, page)
		if err != nil {
			return listPage[*restclient.ChatSummary]{}, err
		}
		out := listPage[*restclient.ChatSummary]{items: make(map[string]*restclient.ChatSummary, len(p.Chats)), total: p.Pagination.TotalCount}
		for i := range p.Chats {
			out.items[p.Chats[i].ID] = &p.Chats[i]
		}
		return out, nil
	}, func(c *restclient.ChatSummary) Object { return Object{ChatSummary: c} })
}

// listDescribed settles ids by a described resource's list, and returns
// those it does not.
func listDescribed(ctx context.Context, r *nodeRun, c restclient.Described, ids []*nodeState) []*nodeState {
	spec := c.Describes()
	return readList(ctx, r, KindOf(spec), ids, func(ctx context.Context, page int) (listPage[any], error) {
		p, err := c.ListAny(ctx, r.l.client, restclient.ListOptions{Page: page, PerPage: spec.Paging.Largest()})
		if err = r.l.learnList(spec, err); err != nil {
			return listPage[any]{}, err
		}
		out := listPage[any]{items: make(map[string]any, len(p.Items)), total: p.Pagination.TotalCount}
		for i, id := range p.IDs {
			out.items[id] = p.Items[i]
		}
		return out, nil
	}, func(it any) Object { return Object{Spec: spec, Listed: it} })
}

// readList settles ids by the list of kind k: its first page, then, when
// the list is longer, its other pages in parallel if they are fewer than
// the ids it did not hold (reserved whole). An id the list holds is found
// (answered with obj of its element); one a whole list does not hold is
// not of the kind. It returns the ids it did not settle (the list was too
// long to read, or changed while read, or the upstream lacks it), for a
// show each. A failure of the list fails every id.
func readList[T any](ctx context.Context, r *nodeRun, k Kind, ids []*nodeState,
	fetch func(context.Context, int) (listPage[T], error), obj func(T) Object,
) (left []*nodeState) {
	if len(ids) == 0 {
		return nil
	}
	l := r.l
	first, err := fetch(ctx, 1)
	if restclient.IsNoRoute(err) || isUnsupported(err) {
		return ids // a server without the list (learnt): a show each
	}
	if err != nil {
		for _, s := range ids {
			r.fail(s, k, err)
		}
		return nil
	}
	if l.shared.Kinds != nil {
		l.shared.Kinds.observeList(l.keyHash, k, first.total)
	}
	// A length below what the page holds is no Sure answer: it proves
	// nothing absent.
	items, complete := first.items, first.total == len(first.items)
	if first.total > len(first.items) {
		missing := 0
		for _, s := range ids {
			if _, ok := items[s.id]; !ok {
				missing++
			}
		}
		if rest := listPages(k, first.total) - 1; rest < missing {
			items, complete = readRest(ctx, l, first, rest, fetch)
		}
	}
	for _, s := range ids {
		switch it, ok := items[s.id]; {
		case ok:
			l.remember(k, s.id)
			r.foundAll(s, obj(it))
		case complete:
			r.notFound(s, k, true)
		default:
			left = append(left, s)
		}
	}
	return left
}

// readRest reads pages 2 to rest+1 of a list whose first page is first, in
// parallel, reserved whole. complete is false when they could not be
// read, or the list changed meanwhile (a length that differs, or fewer
// distinct elements than it reported): what was read is returned anyway.
func readRest[T any](ctx context.Context, l *Planner, first listPage[T], rest int,
	fetch func(context.Context, int) (listPage[T], error),
) (items map[string]T, complete bool) {
	items = first.items
	ctx, release, err := l.budget.Reserve(ctx, rest)
	if err != nil {
		return items, false
	}
	defer release()
	pages := make([]listPage[T], rest)
	errs := make([]error, rest)
	var wg sync.WaitGroup
	for i := range rest {
		wg.Go(func() {
			defer recoverInto(&errs[i])
			pages[i], errs[i] = fetch(ctx, i+2)
		})
	}
	wg.Wait()
	all := make(map[string]T, first.total)
	for id, it := range first.items {
		all[id] = it
	}
	complete = true
	for i, p := range pages {
		if errs[i] != nil || p.total != first.total {
			complete = false
			continue
		}
		for id, it := range p.items {
			all[id] = it
		}
	}
	return all, complete && len(all) == first.total
}

// shows looks each id up as kind k, in parallel, within a reservation of
// n calls taken whole (from the plan's, first): refused, every id fails
// with the refusal.
func (r *nodeRun) shows(ctx context.Context, k Kind, n int, ids []*nodeState, look func(context.Context, *nodeState) error) {
	if len(ids) == 0 {
		return
	}
	ctx, release, err := r.l.budget.Reserve(ctx, n)
	if err != nil {
		for _, s := range ids {
			r.fail(s, k, err)
		}
		return
	}
	defer release()
	var wg sync.WaitGroup
	for _, s := range ids {
		wg.Go(func() {
			var err error
			defer func() {
				if err != nil {
					r.fail(s, k, err)
				}
			}()
			defer recoverInto(&err)
			err = look(ctx, s)
		})
	}
	wg.Wait()
}

// isUnsupported reports whether err says the server lacks what was asked.
func isUnsupported(err error) bool {
	var u *UnsupportedError
	return errors.As(err, &u)
}

func isNotFound(err error) bool {
	var nf *NotFoundError
	return errors.As(err, &nf)
}
