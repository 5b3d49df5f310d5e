package planner_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/planning/paging"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
	"github.com/suregql/suregql/restclient/resource"
)

// nodeEnv is a fake upstream and what the planners of its requests share
// (the kinds and "not found" ids each key was told, family sizes), with
// the production cap of 100 calls an operation.
type nodeEnv struct {
	up     upstream
	shared *planner.Shared
}

func newNodeEnv(t *testing.T, opts ...restclienttest.Option) nodeEnv {
	t.Helper()
	u := newUpstream(t, opts...)
	client, err := restclient.New(u.url, restclient.WithRetryPolicy(restclient.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	return nodeEnv{up: u, shared: &planner.Shared{
		Upstream:    client,
		MaxCalls:    100,
		Kinds:       planner.NewKindMemory(0),
		FamilySizes: &restcache.FamilySizes{},
		RateLimits:  &restcache.RateLimits{},
	}}
}

// op returns the planner of one request of key, and its context.
func (e nodeEnv) op(t *testing.T, key string) (*planner.Planner, context.Context) {
	l := planner.New(e.shared, caller(key))
	return l, planner.WithPlanner(t.Context(), l)
}

// neverSeenIDs returns n valid UUIDs that name nothing.
func neverSeenIDs(prefix, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("6f1c1c1e-0000-4000-8000-%04x%08x", prefix, i)
	}
	return ids
}

// aliased asks each id from its own field, concurrently, as gqlgen
// resolves aliased node fields, after announcing them all (as
// graph.Planning does when the operation begins).
func aliased(ctx context.Context, l *planner.Planner, ids []string, summaries bool) ([]planner.Object, []error) {
	asks := make([]planner.NodeAsk, len(ids))
	for i, id := range ids {
		asks[i] = planner.NodeAsk{IDs: []string{id}, Summaries: summaries}
	}
	objs, errs := make([]planner.Object, len(ids)), make([]error, len(ids))
	l.Begin(planner.Operation{Nodes: asks})
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			objs[i], errs[i] = l.Node(ctx, id, planner.ChatWant{})
		})
	}
	wg.Wait()
	return objs, errs
}

func wantNotFound(t *testing.T, objs []planner.Object, errs []error) {
	t.Helper()
	var nf *planner.NotFoundError
	for i := range errs {
		if !errors.As(errs[i], &nf) || objs[i] != (planner.Object{}) {
			t.Errorf("id %d: %+v, %v; want a NotFoundError", i, objs[i], errs[i])
		}
	}
}

// The node fields of an operation are planned together, reserved once:
// 20 never-seen ids on a standard key (a budget of 25) cost the family's
// first page, then the chat, import and account lists' first pages, 4
// calls for all (one per kind); the key was told they name nothing, so
// the next operation asking them costs none.
func TestNodes_AliasedFieldsArePlannedTogether(t *testing.T) {
	e := newNodeEnv(t)
	ids := neverSeenIDs(1, 20)
	l, ctx := e.op(t, restclienttest.ReadOnlyKey)
	before := e.up.fake.Calls()
	objs, errs := aliased(ctx, l, ids, true)
	wantNotFound(t, objs, errs)
	wantCalls(t, e.up.fake, before, 4)

	l, ctx = e.op(t, restclienttest.ReadOnlyKey)
	before = e.up.fake.Calls()
	objs, errs = aliased(ctx, l, ids, true)
	wantNotFound(t, objs, errs)
	wantCalls(t, e.up.fake, before, 0)
}

// When the plan of the operation's node fields does not fit the budget,
// every field is refused before any call: never some spent and some
// refused. Selections that need each object's show cost the family's
// page and the account list (its elements are accounts whole), and a chat
// and an import show per id: 2+2×11 = 24 fits a standard key's budget,
// 2+2×12 = 26 does not.
func TestNodes_AliasedFieldsAreRefusedWholeAtNoCall(t *testing.T) {
	for _, tc := range []struct {
		ids     int
		refused bool
	}{{11, false}, {12, true}, {20, true}} {
		t.Run(fmt.Sprint(tc.ids), func(t *testing.T) {
			e := newNodeEnv(t)
			l, ctx := e.op(t, restclienttest.ReadOnlyKey)
			objs, errs := aliased(ctx, l, neverSeenIDs(2, tc.ids), false)
			if !tc.refused {
				wantNotFound(t, objs, errs)
				wantCalls(t, e.up.fake, 0, 2+2*tc.ids)
				return
			}
			var tooExpensive *planner.TooExpensiveError
			for i, err := range errs {
				if !errors.As(err, &tooExpensive) {
					t.Errorf("field %d: %v, want a TooExpensiveError", i, err)
				}
			}
			if tooExpensive != nil && tooExpensive.Planned != 2+2*tc.ids {
				t.Errorf("planned %d calls, want %d", tooExpensive.Planned, 2+2*tc.ids)
			}
			wantCalls(t, e.up.fake, 0, 0)
		})
	}
}

// A known kind costs at most one call, the same every time: a category of
// the key's family (never handed to it) is found by the family's first
// page with no chat or import lookup; a chat or an import, once found, by
// its show. An id the operation holds costs none.
func TestNodes_KnownKindsCostOneCall(t *testing.T) {
	e := newNodeEnv(t)
	key := restclienttest.ReadOnlyKey
	cat := e.up.fake.Categories(key)[5]
	chat := e.up.fake.Chats(key)[0]
	imp := e.up.fake.ImportIDs(key)[0]
	ask := func(id string, calls int) planner.Object {
		t.Helper()
		l, ctx := e.op(t, key)
		before := e.up.fake.Calls()
		obj, err := l.Node(ctx, id, planner.ChatWant{})
		if err != nil {
			t.Fatalf("node(%s): %v", id, err)
		}
		wantCalls(t, e.up.fake, before, calls)
		return obj
	}
	for range 3 {
		if obj := ask(cat.ID, 1); obj.Category == nil || obj.Category.Name != cat.Name {
			t.Errorf("node(category) = %+v, want %q", obj, cat.Name)
		}
	}
	ask(chat.ID, 4) // a kind not known: the family's page, a chat and an import show, the account list
	ask(imp, 4)
	for range 2 {
		if obj := ask(chat.ID, 1); obj.Chat == nil || obj.Chat.Title != chat.Title {
			t.Errorf("node(chat) = %+v, want %q", obj, chat.Title)
		}
		if obj := ask(imp, 1); obj.Spec != resource.Imports || obj.Shown.(*restclient.Import).ID != imp {
			t.Errorf("node(import) = %+v, want %s", obj, imp)
		}
	}

	// Held by the operation: no call.
	l, ctx := e.op(t, key)
	if _, err := l.Category(ctx, cat.ID, planner.Want{Subcategories: true}); err != nil { // the family's first page
		t.Fatal(err)
	}
	before := e.up.fake.Calls()
	if obj, err := l.Node(ctx, e.up.fake.Categories(key)[9].ID, planner.ChatWant{}); err != nil || obj.Category == nil {
		t.Errorf("node of a held category: %+v, %v", obj, err)
	}
	wantCalls(t, e.up.fake, before, 0)
}

// nodes(ids:) plans its ids together: known chats share one page of the
// chat list when the selection takes a list's summary (answered with
// theirs), and take one show each (with the page of messages the field
// reads) when it does not.
func TestNodes_ChatsShareTheirListWhenASummaryAnswers(t *testing.T) {
	e := newNodeEnv(t)
	key := restclienttest.DemoKey
	chats := e.up.fake.Chats(key)
	ids := []string{chats[0].ID, chats[1].ID, chats[2].ID}
	l, ctx := e.op(t, key)
	if _, err := l.Chats(ctx, mustChats(t)); err != nil { // hands them out
		t.Fatal(err)
	}
	for _, summaries := range []bool{true, false} {
		l, ctx := e.op(t, key)
		before := e.up.fake.Calls()
		objs, errs := l.Nodes(ctx, planner.NodeRequest{IDs: ids, Summaries: summaries})
		calls := 1
		if !summaries {
			calls = len(ids)
		}
		wantCalls(t, e.up.fake, before, calls)
		for i, obj := range objs {
			switch {
			case errs[i] != nil:
				t.Errorf("%s: %v", ids[i], errs[i])
			case summaries && (obj.ChatSummary == nil || obj.ChatSummary.Title != chats[i].Title):
				t.Errorf("%s: %+v, want the list's summary", ids[i], obj)
			case !summaries && (obj.Chat == nil || obj.Chat.Title != chats[i].Title):
				t.Errorf("%s: %+v, want the chat's show", ids[i], obj)
			}
		}
	}
}

func mustChats(t *testing.T) paging.Request {
	t.Helper()
	first := 20
	req, err := planner.ParseChats(paging.Args{First: &first})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// 35 never-seen ids of an unlimited key fit the cap of 100 calls: the
// family's first page settles them as categories, the chat, import and
// account lists as chats, imports and accounts (35×4 = 140 shows before).
func TestNodes_ManyNeverSeenIDsFitTheCap(t *testing.T) {
	e := newNodeEnv(t, restclienttest.WithUnlimited())
	l, ctx := e.op(t, restclienttest.DemoKey)
	objs, errs := l.Nodes(ctx, planner.NodeRequest{IDs: neverSeenIDs(3, 35), Summaries: true})
	wantNotFound(t, objs, errs)
	wantCalls(t, e.up.fake, 0, 4)
}

// 100 known category ids of the 5,000-category family: the family's 50
// pages rather than 100 shows, every time (no answer cache here).
func TestNodes_KnownCategoriesOfALargeFamily(t *testing.T) {
	e := newNodeEnv(t)
	key := restclienttest.LargeFamilyKey
	cats := e.up.fake.Categories(key)
	var ids []string
	for i := range 100 {
		ids = append(ids, cats[i*len(cats)/100].ID)
	}
	// Handed out to the key: here by a first nodes(ids:) that finds them
	// (the family's first page tells its size, then its other pages).
	l, ctx := e.op(t, key)
	if _, errs := l.Nodes(ctx, planner.NodeRequest{IDs: ids, Summaries: true}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	for round := range 2 {
		l, ctx := e.op(t, key)
		before := e.up.fake.Calls()
		objs, errs := l.Nodes(ctx, planner.NodeRequest{IDs: ids})
		if got := e.up.fake.Calls() - before; got > 50 {
			t.Errorf("round %d: %d calls, want at most 50", round, got)
		}
		for i := range ids {
			if errs[i] != nil || objs[i].Category == nil || objs[i].Category.ID != ids[i] {
				t.Fatalf("round %d: %s: %+v, %v", round, ids[i], objs[i], errs[i])
			}
		}
	}
}

// An id the key was told names nothing stays so until the key writes:
// what it creates might bear it.
func TestNodes_NotFoundIsForgottenByTheKeysWrites(t *testing.T) {
	e := newNodeEnv(t)
	key := restclienttest.DemoKey
	id := neverSeenIDs(4, 1)[0]
	ask := func(calls int) {
		t.Helper()
		l, ctx := e.op(t, key)
		before := e.up.fake.Calls()
		_, err := l.Node(ctx, id, planner.ChatWant{})
		var nf *planner.NotFoundError
		if !errors.As(err, &nf) {
			t.Errorf("node: %v, want a NotFoundError", err)
		}
		wantCalls(t, e.up.fake, before, calls)
	}
	ask(4) // the family's page, a chat and an import show, the account list
	ask(0)
	l, ctx := e.op(t, key)
	if _, err := l.CreateChat(ctx, restclient.CreateChatRequest{Title: "Rent"}); err != nil {
		t.Fatal(err)
	}
	ask(4)
	ask(0)
	l, ctx = e.op(t, key)
	if _, err := l.CreateCategory(ctx, restclient.CreateCategoryRequest{Name: "Node tests"}); err != nil {
		t.Fatal(err)
	}
	ask(4)
	ask(0)
}

// Chats of the large family's user (250: 13 pages of 20), asked together
// and taking a list element: its whole list, read once its first page
// tells its length, costs fewer calls than a show each, and finds those on
// every page. The first time, the ids not handed out yet are also looked
// up as categories (a show each: fewer than the family's other 49 pages),
// imports (the import list's 2 pages) and accounts (their list's page);
// then, known as chats, the chat list's 13 pages alone.
func TestNodes_ALongListIsReadWhole(t *testing.T) {
	e := newNodeEnv(t)
	key := restclienttest.LargeFamilyKey
	chats := e.up.fake.Chats(key)
	var ids []string
	for i := 0; i < len(chats); i += 9 {
		ids = append(ids, chats[i].ID)
	}
	l, ctx := e.op(t, key)
	if _, err := l.Chats(ctx, mustChats(t)); err != nil { // hands the first 20 out
		t.Fatal(err)
	}
	unknown := len(ids) - 3 // 0, 9 and 18 were handed out
	for round, want := range []int{1 + unknown + 13 + 2 + 1, 13} {
		l, ctx := e.op(t, key)
		before := e.up.fake.Calls()
		objs, errs := l.Nodes(ctx, planner.NodeRequest{IDs: ids, Summaries: true})
		for i, id := range ids {
			if errs[i] != nil || objs[i].ChatSummary == nil || objs[i].ChatSummary.ID != id {
				t.Fatalf("round %d: %s: %+v, %v; want its summary", round, id, objs[i], errs[i])
			}
		}
		wantCalls(t, e.up.fake, before, want)
	}
}
