package facade_test

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
)

type chatNode struct {
	ID            string  `json:"id"`
	Title         string  `json:"title"`
	MessageCount  int     `json:"messageCount"`
	LastMessageAt *string `json:"lastMessageAt"`
	// FirstMessageAt is the oldest message's time: what the list sends.
	FirstMessageAt *string `json:"firstMessageAt"`
	Error          *string `json:"error"`
	Messages       *struct {
		TotalCount int `json:"totalCount"`
		Nodes      []struct {
			ID        string `json:"id"`
			Role      string `json:"role"`
			Content   string `json:"content"`
			CreatedAt string `json:"createdAt"`
			ToolCalls []struct {
				FunctionName      string `json:"functionName"`
				FunctionArguments any    `json:"functionArguments"`
				FunctionResult    any    `json:"functionResult"`
			} `json:"toolCalls"`
		} `json:"nodes"`
		PageInfo pageInfo `json:"pageInfo"`
	} `json:"messages"`
}

type chatConn struct {
	TotalCount int        `json:"totalCount"`
	Nodes      []chatNode `json:"nodes"`
	PageInfo   pageInfo   `json:"pageInfo"`
}

const chatsPage = `query($first: Int, $after: String, $last: Int, $before: String) {
  chats(first: $first, after: $after, last: $last, before: $before) {
    totalCount
    nodes { id title messageCount firstMessageAt }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`

func chatTitles(nodes []chatNode) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Title
	}
	return out
}

func seedChatTitles(chats []restclienttest.Chat) []string {
	out := make([]string, len(chats))
	for i, c := range chats {
		out[i] = c.Title
	}
	return out
}

func TestChats_PagingAcrossFixedPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.LargeFamilyKey
	want := seedChatTitles(e.upstream.Chats(key))

	// 30 chats from offset 10 span upstream pages 1 and 2 (20 a page): the
	// cursor tells no length, so page 1 goes first and tells it, then page 2.
	var first struct{ Chats chatConn }
	r := e.ok(key, chatsPage, map[string]any{"first": 10}, &first)
	wantCalls(t, r, 1)
	var second struct{ Chats chatConn }
	r = e.ok(key, chatsPage, map[string]any{"first": 30, "after": *first.Chats.PageInfo.EndCursor}, &second)
	wantCalls(t, r, 2)
	if got := chatTitles(second.Chats.Nodes); !slices.Equal(got, want[10:40]) {
		t.Errorf("titles = %v, want %v", got, want[10:40])
	}
	if second.Chats.TotalCount != len(want) {
		t.Errorf("totalCount = %d, want %d", second.Chats.TotalCount, len(want))
	}

	// Backward: the 25 chats before offset 10+30.
	var back struct{ Chats chatConn }
	e.ok(key, chatsPage, map[string]any{"last": 25, "before": *second.Chats.PageInfo.EndCursor}, &back)
	if got := chatTitles(back.Chats.Nodes); !slices.Equal(got, want[14:39]) {
		t.Errorf("backward titles = %v, want %v", got, want[14:39])
	}

	// The tail: the overflow page answers the last page in one call.
	var tail struct{ Chats chatConn }
	r = e.ok(key, chatsPage, map[string]any{"last": 5}, &tail)
	wantCalls(t, r, 1)
	if got := chatTitles(tail.Chats.Nodes); !slices.Equal(got, want[len(want)-5:]) {
		t.Errorf("tail = %v, want %v", got, want[len(want)-5:])
	}
}

func TestChat_ShowWithMessagesAcrossPages(t *testing.T) {
	t.Parallel()
	forEachVersion(t, testChatShowWithMessagesAcrossPages)
}

func testChatShowWithMessagesAcrossPages(t *testing.T, e *env, v restclienttest.Version) {
	var long restclienttest.Chat
	for _, c := range e.upstream.Chats(restclienttest.DemoKey) {
		if c.MessageCount > 100 {
			long = c
		}
	}
	if long.ID == "" {
		t.Fatal("the demo seed has no chat with more than 100 messages")
	}
	q := `query($id: ID!, $first: Int, $after: String, $last: Int) { chat(id: $id) { id title messageCount lastMessageAt messages(first: $first, after: $after, last: $last) {
		totalCount nodes { id role content createdAt toolCalls { functionName functionArguments functionResult } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }`

	// The first 30 messages start on the page the show answer carries (1
	// call; 20 a page since v0.6.6, 50 before: one more page for today's),
	// plus 1 for lastMessageAt (the newest message is on the last page).
	var out struct{ Chat chatNode }
	r := e.ok(restclienttest.DemoKey, q, map[string]any{"id": long.ID, "first": 30}, &out)
	wantCalls(t, r, 1+(30+messagesPerPage(v)-1)/messagesPerPage(v))
	if out.Chat.MessageCount != long.MessageCount || out.Chat.Messages.TotalCount != long.MessageCount {
		t.Errorf("messageCount %d, totalCount %d, want %d", out.Chat.MessageCount, out.Chat.Messages.TotalCount, long.MessageCount)
	}
	if len(out.Chat.Messages.Nodes) != 30 || !out.Chat.Messages.PageInfo.HasNextPage {
		t.Fatalf("got %d messages (hasNextPage %v), want 30 and more", len(out.Chat.Messages.Nodes), out.Chat.Messages.PageInfo.HasNextPage)
	}

	// Walk forward across the pages, collecting ids.
	seen := map[string]bool{}
	var ids []string
	for _, m := range out.Chat.Messages.Nodes {
		ids = append(ids, m.ID)
	}
	after := *out.Chat.Messages.PageInfo.EndCursor
	for {
		var next struct{ Chat chatNode }
		e.ok(restclienttest.DemoKey, q, map[string]any{"id": long.ID, "first": 45, "after": after}, &next)
		for _, m := range next.Chat.Messages.Nodes {
			ids = append(ids, m.ID)
		}
		if !next.Chat.Messages.PageInfo.HasNextPage {
			break
		}
		after = *next.Chat.Messages.PageInfo.EndCursor
	}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("message %s seen twice", id)
		}
		seen[id] = true
	}
	if len(ids) != long.MessageCount {
		t.Errorf("walked %d messages, want %d", len(ids), long.MessageCount)
	}

	// The newest 3 messages and lastMessageAt: the show call asks for a page
	// past the end, which the upstream answers with the last page: 1 call.
	var tail struct{ Chat chatNode }
	r = e.ok(restclienttest.DemoKey, q, map[string]any{"id": long.ID, "last": 3}, &tail)
	wantCalls(t, r, 1)
	if got, want := len(tail.Chat.Messages.Nodes), 3; got != want {
		t.Fatalf("got %d messages, want %d", got, want)
	}
	if got := tail.Chat.Messages.Nodes[2].ID; got != ids[len(ids)-1] {
		t.Errorf("newest message = %s, want %s", got, ids[len(ids)-1])
	}
	if tail.Chat.LastMessageAt == nil || *tail.Chat.LastMessageAt != tail.Chat.Messages.Nodes[2].CreatedAt {
		t.Errorf("lastMessageAt = %v, want %s", tail.Chat.LastMessageAt, tail.Chat.Messages.Nodes[2].CreatedAt)
	}
}

func TestChat_ToolCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	q := `query($id: ID!) { chat(id: $id) { messages(first: 100) { nodes { role toolCalls { functionName functionArguments functionResult } } } } }`
	var calls, nullResults int
	for _, c := range e.upstream.Chats(restclienttest.DemoKey) {
		var out struct{ Chat chatNode }
		e.ok(restclienttest.DemoKey, q, map[string]any{"id": c.ID}, &out)
		for _, m := range out.Chat.Messages.Nodes {
			for _, tc := range m.ToolCalls {
				calls++
				if m.Role != "assistant" {
					t.Errorf("a %s message has tool calls", m.Role)
				}
				if _, ok := tc.FunctionArguments.(map[string]any); !ok || tc.FunctionName == "" {
					t.Errorf("tool call %+v: want a name and an arguments object", tc)
				}
				if tc.FunctionResult == nil {
					nullResults++
				}
			}
		}
	}
	if calls == 0 || nullResults == 0 {
		t.Errorf("got %d tool calls, %d with a null result; the seed has both kinds", calls, nullResults)
	}
}

func TestChat_CreateThenListAndRename(t *testing.T) {
	t.Parallel()
	forEachVersion(t, testChatCreateThenListAndRename)
}

func testChatCreateThenListAndRename(t *testing.T, e *env, v restclienttest.Version) {
	key := restclienttest.DemoKey
	var created struct {
		CreateChat struct {
			Chat       *chatNode
			UserErrors []struct {
				Field         []string
				Message, Code string
			}
			ClientMutationID *string
		}
	}
	r := e.ok(key, `mutation($in: CreateChatInput!) { createChat(input: $in) { clientMutationId userErrors { field message code } chat { id title messageCount messages { totalCount nodes { role content } } } } }`,
		map[string]any{"in": map[string]any{"title": "Budget review", "message": "How did I do in March?", "clientMutationId": "m1"}}, &created)
	// Since v0.7.x the answer to a create shows no message ("messages":
	// []): the payload reads them, one call more. Before, the answer held
	// them.
	if v == restclienttest.Legacy {
		wantCalls(t, r, 1)
	} else {
		wantCalls(t, r, 2)
	}
	c := created.CreateChat
	if c.Chat == nil || c.Chat.Title != "Budget review" || len(c.UserErrors) != 0 || c.ClientMutationID == nil || *c.ClientMutationID != "m1" {
		t.Fatalf("createChat = %+v", c)
	}
	if c.Chat.Messages == nil || len(c.Chat.Messages.Nodes) != 1 || c.Chat.Messages.Nodes[0].Content != "How did I do in March?" {
		t.Errorf("messages = %+v, want the first user message", c.Chat.Messages)
	}

	var list struct{ Chats chatConn }
	e.ok(key, chatsPage, map[string]any{"first": 1}, &list)
	if len(list.Chats.Nodes) != 1 || list.Chats.Nodes[0].ID != c.Chat.ID {
		t.Fatalf("newest chat = %+v, want the created one", list.Chats.Nodes)
	}

	var renamed struct {
		UpdateChat struct {
			Chat       *chatNode
			UserErrors []struct{ Code string }
		}
	}
	r = e.ok(key, `mutation($in: UpdateChatInput!) { updateChat(input: $in) { userErrors { code } chat { id title } } }`,
		map[string]any{"in": map[string]any{"id": c.Chat.ID, "title": "Q1 budget review"}}, &renamed)
	wantCalls(t, r, 1)
	if renamed.UpdateChat.Chat == nil || renamed.UpdateChat.Chat.Title != "Q1 budget review" {
		t.Fatalf("updateChat = %+v", renamed.UpdateChat)
	}
	e.ok(key, chatsPage, map[string]any{"first": 1}, &list)
	if list.Chats.Nodes[0].Title != "Q1 budget review" {
		t.Errorf("list title = %q after rename", list.Chats.Nodes[0].Title)
	}
}

func TestChat_MutationUserErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name, query string
		input       map[string]any
		wantCode    string
		wantCalls   int
	}{
		{"blank title on create", `mutation($in: CreateChatInput!) { createChat(input: $in) { chat { id } userErrors { field message code } } }`,
			map[string]any{"title": "   "}, "BLANK", 0},
		{"blank title on update", `mutation($in: UpdateChatInput!) { updateChat(input: $in) { chat { id } userErrors { field message code } } }`,
			map[string]any{"id": "6f1c7d0e-4c57-4bde-9a3c-3f6c1b8a0d11", "title": ""}, "BLANK", 0},
		{"id not a UUID", `mutation($in: UpdateChatInput!) { updateChat(input: $in) { chat { id } userErrors { field message code } } }`,
			map[string]any{"id": "../categories", "title": "x"}, "INVALID_ID", 0},
		{"unknown chat", `mutation($in: UpdateChatInput!) { updateChat(input: $in) { chat { id } userErrors { field message code } } }`,
			map[string]any{"id": "6f1c7d0e-4c57-4bde-9a3c-3f6c1b8a0d11", "title": "x"}, "NOT_FOUND", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out map[string]struct {
				Chat       *chatNode
				UserErrors []struct {
					Field   []string
					Message string
					Code    string
				}
			}
			r := e.ok(restclienttest.DemoKey, tc.query, map[string]any{"in": tc.input}, &out)
			wantCalls(t, r, tc.wantCalls)
			for _, p := range out {
				if p.Chat != nil || len(p.UserErrors) != 1 || p.UserErrors[0].Code != tc.wantCode {
					t.Errorf("payload = %+v, want one %s user error", p, tc.wantCode)
				}
			}
		})
	}

	t.Run("upstream 422", func(t *testing.T) {
		e.upstream.FailNext("/api/v1/chats", 1, 422, "application/json", `{"error":"Failed to create chat","details":["Title is too long"]}`)
		var out struct {
			CreateChat struct {
				UserErrors []struct {
					Field   []string
					Message string
				}
			}
		}
		r := e.ok(restclienttest.DemoKey, `mutation { createChat(input: {title: "x"}) { userErrors { field message } } }`, nil, &out)
		wantCalls(t, r, 1)
		if ue := out.CreateChat.UserErrors; len(ue) != 1 || ue[0].Message != "Title is too long" || !slices.Equal(ue[0].Field, []string{"input", "title"}) {
			t.Errorf("userErrors = %+v", ue)
		}
	})
}

// Two keys of two families, queried in parallel, each see only their own
// family's categories and chats.
func TestKeysNeverSeeEachOthersData(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	keys := []string{restclienttest.DemoKey, restclienttest.OtherFamilyKey}
	want := map[string]string{}
	for _, k := range keys {
		want[k] = fmt.Sprint(seedNames(e.upstream.Categories(k))[:3], seedChatTitles(e.upstream.Chats(k))[:2])
	}
	q := `{ categories(first: 3) { nodes { name } } chats(first: 2) { nodes { title } } }`
	var wg sync.WaitGroup
	for i := range 40 {
		key := keys[i%2]
		wg.Go(func() {
			var out struct {
				Categories categoryConn
				Chats      chatConn
			}
			data, _, err := e.client(key).ExecRawWithExtensions(t.Context(), q, nil)
			if err != nil {
				t.Errorf("%s: %v", key, err)
				return
			}
			if err := jsonUnmarshal(data, &out); err != nil {
				t.Error(err)
				return
			}
			if got := fmt.Sprint(names(out.Categories.Nodes), chatTitles(out.Chats.Nodes)); got != want[key] {
				t.Errorf("%s saw %s, want %s", key, got, want[key])
			}
		})
	}
	wg.Wait()
	for _, req := range e.upstream.Requests() {
		if req.APIKey != restclienttest.DemoKey && req.APIKey != restclienttest.OtherFamilyKey {
			t.Errorf("upstream saw key %q", req.APIKey)
		}
	}
}

// createChats creates chats through the facade until key's user has n.
func createChats(t *testing.T, e *env, key string, n int) {
	t.Helper()
	for i := len(e.upstream.Chats(key)); i < n; i++ {
		r := e.ok(key, `mutation($title: String!) { createChat(input: {title: $title}) { chat { id } userErrors { code } } }`,
			map[string]any{"title": fmt.Sprintf("Created %d", i+1)}, nil)
		wantCalls(t, r, 1)
	}
	if got := len(e.upstream.Chats(key)); got != n {
		t.Fatalf("the user has %d chats, want %d", got, n)
	}
}

// The scenario: a client keeps the end cursor of chats(first: 5)
// while a sixth chat is created (chats are listed newest first, so every
// chat moves down one). The cursor names its chat, the oldest: the window
// after it is still empty (the new chat belongs at the top, before the
// cursor), while totalCount and hasPreviousPage are the upstream's current
// ones, for the one call that tells them. (With offset cursors, this
// answered the chat the new one pushed down: an item the client had.)
func TestChats_CursorKeptWhileTheListGrows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts []envOption
		// What the second read of a changed list costs: with the cache it
		// is the page the first read brought.
		secondCalls int
	}{
		{"no cache", nil, 1},
		// The facade's own writes drop the key's cached answers.
		{"cache", []envOption{withConfig(func(c *facade.Config) { c.CacheTTL = time.Minute })}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.opts...)
			key := restclienttest.DemoKey
			createChats(t, e, key, 5)

			var first struct{ Chats chatConn }
			r := e.ok(key, chatsPage, map[string]any{"first": 5}, &first)
			wantCalls(t, r, 1)
			c := first.Chats
			if c.TotalCount != 5 || len(c.Nodes) != 5 || c.PageInfo.HasNextPage || c.PageInfo.EndCursor == nil {
				t.Fatalf("chats(first: 5) = totalCount %d, %d nodes, pageInfo %+v; want all 5, no next page", c.TotalCount, len(c.Nodes), c.PageInfo)
			}
			end, start := *c.PageInfo.EndCursor, *c.PageInfo.StartCursor
			had := chatTitles(c.Nodes)

			for _, n := range []int{6, 7} {
				createChats(t, e, key, n)
				want := seedChatTitles(e.upstream.Chats(key))
				var next struct{ Chats chatConn }
				r = e.ok(key, chatsPage, map[string]any{"first": 5, "after": end}, &next)
				wantCalls(t, r, 1) // page 1 of 20 holds the list, and the cursor's chat
				c = next.Chats
				if got := chatTitles(c.Nodes); c.TotalCount != n || len(got) != 0 || c.PageInfo.HasNextPage || !c.PageInfo.HasPreviousPage {
					t.Errorf("%d chats: after the oldest chat's kept cursor = totalCount %d, %v, pageInfo %+v; want %d, none, a previous page only",
						n, c.TotalCount, got, c.PageInfo, n)
				}
				// Before the newest chat of the first answer: the new chats,
				// newest first, and nothing the client had.
				var before struct{ Chats chatConn }
				r = e.ok(key, chatsPage, map[string]any{"last": 5, "before": start}, &before)
				wantCalls(t, r, tc.secondCalls)
				c = before.Chats
				if got := chatTitles(c.Nodes); !slices.Equal(got, want[:n-5]) || slices.ContainsFunc(got, func(s string) bool { return slices.Contains(had, s) }) ||
					c.PageInfo.HasPreviousPage || !c.PageInfo.HasNextPage {
					t.Errorf("%d chats: before the kept start cursor = %v, pageInfo %+v; want %v, a next page only", n, got, c.PageInfo, want[:n-5])
				}
			}
		})
	}
}

// A client that edits a cursor (its format is easy to read) chooses where
// the window starts, never what totalCount or hasNextPage say: those are the
// upstream's, whatever the offset. The old format, which carried a length,
// is refused before any call.
func TestChats_EditedCursorCannotSetTotalCount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.DemoKey
	want := seedChatTitles(e.upstream.Chats(key))
	n := len(want)
	var first struct{ Chats chatConn }
	e.ok(key, chatsPage, map[string]any{"first": 1}, &first)
	genuine := *first.Chats.PageInfo.EndCursor

	for _, off := range []int{0, n - 2, n - 1, n, 19, 20, 249, 1000, 1<<30 - 1} {
		t.Run(fmt.Sprintf("after %d", off), func(t *testing.T) {
			var out struct{ Chats chatConn }
			r := e.ok(key, chatsPage, map[string]any{"first": 2, "after": editCursor(t, genuine, "c2", strconv.Itoa(off))}, &out)
			wantCalls(t, r, 1)
			from := min(off+1, n)
			c := out.Chats
			if got, wantNodes := chatTitles(c.Nodes), want[from:min(from+2, n)]; !slices.Equal(got, wantNodes) {
				t.Errorf("chats = %v, want %v", got, wantNodes)
			}
			if c.TotalCount != n || c.PageInfo.HasNextPage != (from+2 < n) || !c.PageInfo.HasPreviousPage {
				t.Errorf("totalCount %d, pageInfo %+v; want %d, hasNextPage %v, hasPreviousPage", c.TotalCount, c.PageInfo, n, from+2 < n)
			}
		})
		t.Run(fmt.Sprintf("before %d", off), func(t *testing.T) {
			var out struct{ Chats chatConn }
			r := e.ok(key, chatsPage, map[string]any{"last": 2, "before": editCursor(t, genuine, "c2", strconv.Itoa(off))}, &out)
			wantCalls(t, r, 1)
			end := min(off, n)
			start := min(max(off-2, 0), end)
			c := out.Chats
			if got, wantNodes := chatTitles(c.Nodes), want[start:end]; !slices.Equal(got, wantNodes) {
				t.Errorf("chats = %v, want %v", got, wantNodes)
			}
			if c.TotalCount != n || c.PageInfo.HasNextPage != (end < n) || c.PageInfo.HasPreviousPage != (start > 0) {
				t.Errorf("totalCount %d, pageInfo %+v; want %d, hasNextPage %v, hasPreviousPage %v", c.TotalCount, c.PageInfo, n, end < n, start > 0)
			}
		})
	}

	for name, forged := range map[string]string{
		"c1 claiming 1000 chats":        editCursor(t, genuine, "c1", "0", "1000"),
		"c1 claiming the list ended":    editCursor(t, genuine, "c1", "0", "1"),
		"c2 with a length appended":     editCursor(t, genuine, "c2", "0", "1000"),
		"c2 with a negative offset":     editCursor(t, genuine, "c2", "-1"),
		"c2 with an offset over 2^30-1": editCursor(t, genuine, "c2", "1073741824"),
	} {
		t.Run(name, func(t *testing.T) {
			r := e.do(key, chatsPage, map[string]any{"first": 2, "after": forged})
			wantError(t, r, "BAD_USER_INPUT")
			wantCalls(t, r, 0)
		})
	}
}
