package facade_test

import (
	"net/http"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/planning/paging"
)

// --- variant 1: overflow answers an EMPTY page ------------------------------

// emptyOverflow answers a page past the end with no items and the page
// asked for (pagy's overflow: :empty_page) instead of the last page.
type emptyOverflow struct {
	t       *testing.T
	emptied atomic.Int64 // answers turned into an empty page
}

func (v *emptyOverflow) wrap(next http.Handler) http.Handler {
	return rewriteJSON(v.t, next, func(r *http.Request, status int, body any) any {
		obj, ok := body.(map[string]any)
		if r.Method != http.MethodGet || status != http.StatusOK || !ok {
			return body
		}
		pag, ok := obj["pagination"].(map[string]any)
		if !ok {
			return body
		}
		asked := askedPage(r)
		if asked <= jsonNumberInt(pag["page"]) {
			return body
		}
		pag["page"] = asked
		for _, items := range []string{"categories", "chats", "messages"} {
			if _, ok := obj[items]; ok {
				obj[items] = []any{}
			}
		}
		v.emptied.Add(1)
		return obj
	})
}

func TestVariant_OverflowAnswersAnEmptyPage(t *testing.T) {
	t.Parallel()
	v := &emptyOverflow{t: t}
	e := newVariantEnv(t, v.wrap)
	seed := restclienttest.New()

	t.Run("categories last", func(t *testing.T) {
		e := variantEnvFor(t, e)
		for _, key := range []string{restclienttest.DemoKey, restclienttest.LargeFamilyKey} {
			all := seedNames(e.upstream.Categories(key))
			before := v.emptied.Load()
			var out struct{ Categories categoryConn }
			r := e.ok(key, categoriesPage, map[string]any{"last": 3}, &out)
			t.Logf("%s: categories(last: 3) cost %d calls", key, r.calls)
			if v.emptied.Load() == before {
				t.Errorf("%s: no overflow page was asked for: the variant was not exercised", key)
			}
			if got, want := names(out.Categories.Nodes), all[len(all)-3:]; !slices.Equal(got, want) {
				t.Errorf("%s: names = %v, want %v", key, got, want)
			}
			if c := out.Categories; c.TotalCount != len(all) || c.PageInfo.HasNextPage || !c.PageInfo.HasPreviousPage {
				t.Errorf("%s: totalCount %d, pageInfo %+v; want %d, previous but no next page", key, c.TotalCount, c.PageInfo, len(all))
			}
			if r.calls > 2 {
				t.Errorf("%s: %d calls, want at most 2 (the empty overflow page, then the tail)", key, r.calls)
			}
		}

		// The roots of the large family: another filter, same tail logic.
		key := restclienttest.LargeFamilyKey
		var roots []string
		for _, c := range e.upstream.Categories(key) {
			if c.ParentID == "" {
				roots = append(roots, c.Name)
			}
		}
		var out struct{ Categories categoryConn }
		r := e.ok(key, categoriesPage, map[string]any{"last": 40, "rootsOnly": true}, &out)
		t.Logf("categories(rootsOnly: true, last: 40): %d calls", r.calls)
		if got, want := names(out.Categories.Nodes), roots[len(roots)-40:]; !slices.Equal(got, want) {
			t.Errorf("roots tail = %v, want %v", got, want)
		}
	})

	t.Run("chats last", func(t *testing.T) {
		e := variantEnvFor(t, e)
		key := restclienttest.LargeFamilyKey
		want := seedChatList(t, seed, key)
		before := v.emptied.Load()
		var out struct{ Chats chatConn }
		r := e.ok(key, chatsPage, map[string]any{"last": 5}, &out)
		t.Logf("chats(last: 5) on 250 chats: %d calls", r.calls)
		if v.emptied.Load() == before {
			t.Error("no overflow page was asked for: the variant was not exercised")
		}
		tail := want[len(want)-5:]
		if got := chatTitles(out.Chats.Nodes); !slices.Equal(got, seedChatTitlesOf(tail)) {
			t.Fatalf("titles = %v, want %v", got, seedChatTitlesOf(tail))
		}
		for i, n := range out.Chats.Nodes {
			wantMessageTime(t, n.Title, "firstMessageAt", n.FirstMessageAt, tail[i].FirstMessageAt, false)
			if n.MessageCount != tail[i].MessageCount {
				t.Errorf("%s: messageCount %d, want %d", n.Title, n.MessageCount, tail[i].MessageCount)
			}
		}
		if c := out.Chats; c.TotalCount != len(want) || c.PageInfo.HasNextPage || !c.PageInfo.HasPreviousPage {
			t.Errorf("totalCount %d, pageInfo %+v; want %d, previous but no next page", c.TotalCount, c.PageInfo, len(want))
		}
		if r.calls > 2 {
			t.Errorf("%d calls, want at most 2", r.calls)
		}
	})

	t.Run("chat messages last and lastMessageAt", func(t *testing.T) {
		e := variantEnvFor(t, e)
		long := demoLongChat(t, e)
		msgs := seedMessages(t, seed, restclienttest.DemoKey, long.ID)
		newest := msgs[len(msgs)-1].CreatedAt
		q := `query($id: ID!) { chat(id: $id) { messageCount lastMessageAt messages(last: 3) {
			totalCount nodes { id content createdAt } pageInfo { hasNextPage hasPreviousPage } } } }`
		before := v.emptied.Load()
		var out struct{ Chat chatNode }
		r := e.ok(restclienttest.DemoKey, q, map[string]any{"id": long.ID}, &out)
		t.Logf("chat { lastMessageAt messages(last: 3) } on 120 messages: %d calls", r.calls)
		if v.emptied.Load() == before {
			t.Error("the show call did not ask for an overflow page: the variant was not exercised")
		}
		m := out.Chat.Messages
		if m == nil {
			t.Fatal("messages is null")
		}
		var got []string
		for _, n := range m.Nodes {
			got = append(got, n.ID)
		}
		if want := seedMessageIDs(msgs[len(msgs)-3:]); !slices.Equal(got, want) {
			t.Errorf("message ids = %v, want %v", got, want)
		}
		if m.TotalCount != len(msgs) || out.Chat.MessageCount != len(msgs) || m.PageInfo.HasNextPage || !m.PageInfo.HasPreviousPage {
			t.Errorf("totalCount %d, messageCount %d, pageInfo %+v; want %d, previous but no next page", m.TotalCount, out.Chat.MessageCount, m.PageInfo, len(msgs))
		}
		if len(m.Nodes) == 3 && m.Nodes[1].Content != "What did I spend in December 2025?" {
			t.Errorf("second newest message = %q", m.Nodes[1].Content)
		}
		wantMessageTime(t, long.Title, "lastMessageAt", out.Chat.LastMessageAt, &newest, true)
		if r.calls > 2 {
			t.Errorf("%d calls, want at most 2", r.calls)
		}

		// Only the newest messages, and only lastMessageAt: the show call
		// asks for the overflow page in both.
		var only struct{ Chat chatNode }
		r = e.ok(restclienttest.DemoKey, `query($id: ID!) { chat(id: $id) { messages(last: 3) { nodes { id } } } }`, map[string]any{"id": long.ID}, &only)
		t.Logf("chat { messages(last: 3) }: %d calls", r.calls)
		got = got[:0]
		for _, n := range only.Chat.Messages.Nodes {
			got = append(got, n.ID)
		}
		if want := seedMessageIDs(msgs[len(msgs)-3:]); !slices.Equal(got, want) {
			t.Errorf("message ids = %v, want %v", got, want)
		}

		// lastMessageAt alone, on every chat of two users (the other user
		// has a chat without messages).
		for _, key := range []string{restclienttest.DemoKey, restclienttest.OtherFamilyKey} {
			for _, c := range seedChatList(t, seed, key) {
				var one struct{ Chat chatNode }
				r := e.ok(key, `query($id: ID!) { chat(id: $id) { lastMessageAt } }`, map[string]any{"id": c.ID}, &one)
				t.Logf("chat { lastMessageAt } on %q (%d messages): %d calls", c.Title, c.MessageCount, r.calls)
				wantMessageTime(t, c.Title, "lastMessageAt", one.Chat.LastMessageAt, seedNewestAt(t, seed, key, c.ID), true)
			}
		}
	})

	t.Run("forward paging past the end", func(t *testing.T) {
		e := variantEnvFor(t, e)

		// Chats, 40 at a time: the last window (offsets 240..279) spans
		// page 13 and page 14, which is past the end. The cursor tells no
		// length, so page 13 is asked first; it tells the list ends at 250,
		// and page 14 is never asked.
		key := restclienttest.LargeFamilyKey
		want := seedChatList(t, seed, key)
		before := v.emptied.Load()
		var walked []string
		vars := map[string]any{"first": 40}
		calls := 0
		for step := 0; ; step++ {
			var out struct{ Chats chatConn }
			r := e.ok(key, chatsPage, vars, &out)
			calls += r.calls
			for i, n := range out.Chats.Nodes {
				walked = append(walked, n.Title)
				if off := len(walked) - 1; off < len(want) {
					wantMessageTime(t, n.Title, "firstMessageAt", out.Chats.Nodes[i].FirstMessageAt, want[off].FirstMessageAt, false)
				}
			}
			if out.Chats.PageInfo.HasPreviousPage != (step > 0) {
				t.Errorf("step %d: hasPreviousPage = %v", step, out.Chats.PageInfo.HasPreviousPage)
			}
			if !out.Chats.PageInfo.HasNextPage {
				break
			}
			if step > 10 || out.Chats.PageInfo.EndCursor == nil {
				t.Fatalf("the walk does not end (step %d, pageInfo %+v)", step, out.Chats.PageInfo)
			}
			vars["after"] = *out.Chats.PageInfo.EndCursor
		}
		t.Logf("walking 250 chats 40 at a time: %d calls, %d empty pages past the end", calls, v.emptied.Load()-before)
		if !slices.Equal(walked, seedChatTitlesOf(want)) {
			t.Errorf("forward walk: %d chats, want the %d of the seed in order", len(walked), len(want))
		}

		// Stale cursors made when the lists were longer, far enough past
		// today's end that the window's page is past the last one.
		before = v.emptied.Load()
		total := len(want)
		var out struct{ Chats chatConn }
		r := e.ok(key, chatsPage, map[string]any{"first": 20, "after": paging.EncodeCursor("chats", total+29)}, &out)
		if len(out.Chats.Nodes) != 0 || out.Chats.PageInfo.HasNextPage || out.Chats.TotalCount != total {
			t.Errorf("chats after a stale cursor: %d nodes, hasNextPage %v, totalCount %d; want none, false, %d",
				len(out.Chats.Nodes), out.Chats.PageInfo.HasNextPage, out.Chats.TotalCount, total)
		}
		t.Logf("chats(first: 20) after a stale cursor past the end: %d calls", r.calls)

		cats := seedNames(e.upstream.Categories(key))
		var cout struct{ Categories categoryConn }
		stale := paging.EncodeCursor("categories?classification=&roots_only=false&parent_id=", len(cats)+29)
		r = e.ok(key, categoriesPage, map[string]any{"first": 20, "after": stale}, &cout)
		if len(cout.Categories.Nodes) != 0 || cout.Categories.PageInfo.HasNextPage || cout.Categories.TotalCount != len(cats) {
			t.Errorf("categories after a stale cursor: %d nodes, hasNextPage %v, totalCount %d; want none, false, %d",
				len(cout.Categories.Nodes), cout.Categories.PageInfo.HasNextPage, cout.Categories.TotalCount, len(cats))
		}
		t.Logf("categories(first: 20) after a stale cursor past the end: %d calls", r.calls)
		if v.emptied.Load() == before {
			t.Error("no page past the end was asked for: the variant was not exercised")
		}

		// Messages from offset 100, 100 of them: pages 3 and 4 (past the
		// end) of the 120-message chat.
		long := demoLongChat(t, e)
		msgs := seedMessages(t, seed, restclienttest.DemoKey, long.ID)
		after := paging.EncodeCursor("chats/"+long.ID+"/messages", 99)
		var mout struct{ Chat chatNode }
		r = e.ok(restclienttest.DemoKey, `query($id: ID!, $after: String) { chat(id: $id) { messages(first: 100, after: $after) {
			nodes { id } pageInfo { hasNextPage hasPreviousPage } } } }`, map[string]any{"id": long.ID, "after": after}, &mout)
		t.Logf("chat { messages(first: 100, after: offset 99) } on 120 messages: %d calls", r.calls)
		var got []string
		for _, n := range mout.Chat.Messages.Nodes {
			got = append(got, n.ID)
		}
		if want := seedMessageIDs(msgs[100:]); !slices.Equal(got, want) {
			t.Errorf("messages 100.. = %v, want %v", got, want)
		}
		if pi := mout.Chat.Messages.PageInfo; pi.HasNextPage || !pi.HasPreviousPage {
			t.Errorf("pageInfo = %+v, want previous but no next page", pi)
		}
	})
}

func seedChatTitlesOf(cs []seedChat) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Title
	}
	return out
}
