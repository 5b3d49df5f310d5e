package facade_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
)

type userError struct {
	Field   []string `json:"field"`
	Message string   `json:"message"`
	Code    string   `json:"code"`
}

// wantOneUserError fails unless ue is one user error of code on field
// (nil: any field).
func wantOneUserError(t *testing.T, ue []userError, code string, field ...string) {
	t.Helper()
	if len(ue) != 1 || ue[0].Code != code || (field != nil && !slices.Equal(ue[0].Field, field)) || ue[0].Message == "" {
		t.Errorf("userErrors = %+v, want one %s on %v", ue, code, field)
	}
}

// withAnswerCache turns the facade's answer cache on.
var withAnswerCache = withConfig(func(c *facade.Config) { c.CacheTTL = time.Minute })

// chatByTitle finds one of key's chats.
func chatByTitle(t *testing.T, e *env, key, title string) restclienttest.Chat {
	t.Helper()
	for _, c := range e.upstream.Chats(key) {
		if c.Title == title {
			return c
		}
	}
	t.Fatalf("%s has no chat %q", key, title)
	return restclienttest.Chat{}
}

type sentMessage struct {
	ID               string  `json:"id"`
	Role             string  `json:"role"`
	Content          string  `json:"content"`
	AIResponseStatus *string `json:"aiResponseStatus"`
}

type sendPayload struct {
	SendChatMessage *struct {
		Message          *sentMessage `json:"message"`
		UserErrors       []userError  `json:"userErrors"`
		ClientMutationID *string      `json:"clientMutationId"`
		ConfirmedByRead  bool         `json:"confirmedByRead"`
	} `json:"sendChatMessage"`
}

const sendMessage = `mutation($in: SendChatMessageInput!) { sendChatMessage(input: $in) {
  clientMutationId confirmedByRead userErrors { field message code } message { id role content aiResponseStatus } } }`

// sendChatMessage is one upstream call: the message as the server stored
// it, "pending" its reply; the chat then shows it. Input the server would
// refuse for certain (a blank message, an id that is no UUID) costs no
// call; an unknown chat is a NOT_FOUND user error; a key without the write
// scope, or whose user has no AI features, is FORBIDDEN.
func TestSendChatMessage(t *testing.T) {
	forEachVersion(t, testSendChatMessage)
}

func testSendChatMessage(t *testing.T, e *env, v restclienttest.Version) {
	key := restclienttest.DemoKey
	chat := chatByTitle(t, e, key, "Budget check for January")
	const content = "And how about February?"

	var out sendPayload
	r := e.ok(key, sendMessage, map[string]any{"in": map[string]any{"chatId": chat.ID, "content": content, "clientMutationId": "s1"}}, &out)
	wantCalls(t, r, 1)
	p := out.SendChatMessage
	if p == nil || p.Message == nil || len(p.UserErrors) != 0 || p.ClientMutationID == nil || *p.ClientMutationID != "s1" || p.ConfirmedByRead {
		t.Fatalf("sendChatMessage = %s", r.data)
	}
	m := p.Message
	if m.ID == "" || m.Role != "user" || m.Content != content || m.AIResponseStatus == nil || *m.AIResponseStatus != "pending" {
		t.Errorf("message = %+v, want the user's message, its reply pending", m)
	}
	if got := chatByTitle(t, e, key, chat.Title).MessageCount; got != chat.MessageCount+1 {
		t.Errorf("the chat holds %d messages, want %d", got, chat.MessageCount+1)
	}

	// The chat shows it, as its newest message; a message read from a chat
	// has no reply status (the server does not tag it).
	var read struct {
		Chat struct {
			MessageCount int
			Messages     struct{ Nodes []sentMessage }
		}
	}
	r = e.ok(key, `query($id: ID!) { chat(id: $id) { messageCount messages(last: 1) { nodes { id role content aiResponseStatus } } } }`,
		map[string]any{"id": chat.ID}, &read)
	wantCalls(t, r, 1)
	if n := read.Chat.Messages.Nodes; read.Chat.MessageCount != chat.MessageCount+1 || len(n) != 1 || n[0].ID != m.ID || n[0].AIResponseStatus != nil {
		t.Errorf("chat after the send = %s, want %d messages, the newest %s with a null aiResponseStatus", r.data, chat.MessageCount+1, m.ID)
	}

	for _, tc := range []struct {
		name  string
		in    map[string]any
		code  string
		field []string
		calls int
	}{
		{"blank content", map[string]any{"chatId": chat.ID, "content": "  \n"}, "BLANK", []string{"input", "content"}, 0},
		{"chat id not a UUID", map[string]any{"chatId": "../chats", "content": "hi"}, "INVALID_ID", []string{"input", "chatId"}, 0},
		{"unknown chat", map[string]any{"chatId": "6f1c7d0e-4c57-4bde-9a3c-3f6c1b8a0d11", "content": "hi"}, "NOT_FOUND", []string{"input", "chatId"}, 1},
		{"another user's chat", map[string]any{"chatId": e.upstream.Chats(restclienttest.OtherFamilyKey)[0].ID, "content": "hi"}, "NOT_FOUND", []string{"input", "chatId"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out sendPayload
			r := e.ok(key, sendMessage, map[string]any{"in": tc.in}, &out)
			wantCalls(t, r, tc.calls)
			if out.SendChatMessage == nil || out.SendChatMessage.Message != nil {
				t.Fatalf("sendChatMessage = %s, want no message", r.data)
			}
			wantOneUserError(t, out.SendChatMessage.UserErrors, tc.code, tc.field...)
		})
	}
	for _, k := range []string{restclienttest.ReadOnlyKey, restclienttest.NoAIKey} {
		t.Run(k, func(t *testing.T) {
			r := e.do(k, sendMessage, map[string]any{"in": map[string]any{"chatId": chat.ID, "content": "hi"}})
			wantCalls(t, r, 1)
			wantError(t, r, "FORBIDDEN")
			if string(r.data) != `{"sendChatMessage":null}` {
				t.Errorf("data = %s, want the field null", r.data)
			}
		})
	}
	if got := chatByTitle(t, e, key, chat.Title).MessageCount; got != chat.MessageCount+1 {
		t.Errorf("the chat holds %d messages after the refused sends, want %d", got, chat.MessageCount+1)
	}
}

type deletePayload struct {
	DeleteChat *struct {
		DeletedChatID    *string     `json:"deletedChatId"`
		UserErrors       []userError `json:"userErrors"`
		ClientMutationID *string     `json:"clientMutationId"`
		ConfirmedByRead  bool        `json:"confirmedByRead"`
	} `json:"deleteChat"`
}

const deleteChat = `mutation($in: DeleteChatInput!) { deleteChat(input: $in) { deletedChatId clientMutationId confirmedByRead userErrors { field message code } } }`

const chatQuery = `query($id: ID!) { chat(id: $id) { id title messageCount } }`

// deleteChat is one upstream call; afterwards the chat is NOT_FOUND and
// chats no longer lists it, also with the answer cache on (the reads
// before the delete are not reused after it); a cursor taken before the
// delete pages on from where it was, whether the deleted chat came before
// it or was its own. Deleting it again, or an unknown chat, is a NOT_FOUND
// user error; a read-only key is FORBIDDEN.
func TestDeleteChat(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []envOption
		// What a read of a page read before costs (and a window of the
		// list once the list was read after the delete): with the cache,
		// that read's answer serves it.
		repeatCalls int
	}{{"no cache", nil, 1}, {"cache", []envOption{withAnswerCache}, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			forEachVersion(t, func(t *testing.T, e *env, v restclienttest.Version) { testDeleteChat(t, e, tc.repeatCalls) }, tc.opts...)
		})
	}
}

func testDeleteChat(t *testing.T, e *env, repeatCalls int) {
	key := restclienttest.LargeFamilyKey
	all := e.upstream.Chats(key)
	titles := seedChatTitles(all)

	// The victim is the second newest chat: its newest message is the
	// assistant's, so its answer may be cached (a chat awaiting a reply
	// never is).
	victim := all[1]
	if victim.MessageCount%2 != 0 {
		t.Fatalf("%s has %d messages: its newest is the user's", victim.Title, victim.MessageCount)
	}
	rest := slices.Delete(slices.Clone(titles), 1, 2)

	// Read before the delete: the list, cursors in it, and the chat; then
	// again (with the cache, from what was read).
	var before struct{ Chats chatConn }
	e.ok(key, chatsPage, map[string]any{"first": 3}, &before)
	afterThird := *before.Chats.PageInfo.EndCursor // the cursor of chat 2
	var two struct{ Chats chatConn }
	e.ok(key, chatsPage, map[string]any{"first": 2}, &two)
	afterVictim := *two.Chats.PageInfo.EndCursor // the cursor of chat 1, the victim
	e.ok(key, chatQuery, map[string]any{"id": victim.ID}, nil)
	wantCalls(t, e.ok(key, chatQuery, map[string]any{"id": victim.ID}, nil), repeatCalls)
	wantCalls(t, e.ok(key, chatsPage, map[string]any{"first": 3}, nil), repeatCalls)

	var out deletePayload
	r := e.ok(key, deleteChat, map[string]any{"in": map[string]any{"id": victim.ID, "clientMutationId": "d1"}}, &out)
	wantCalls(t, r, 1)
	p := out.DeleteChat
	if p == nil || p.DeletedChatID == nil || *p.DeletedChatID != victim.ID || len(p.UserErrors) != 0 || p.ClientMutationID == nil || *p.ClientMutationID != "d1" || p.ConfirmedByRead {
		t.Fatalf("deleteChat = %s", r.data)
	}

	r = e.do(key, chatQuery, map[string]any{"id": victim.ID})
	wantCalls(t, r, 1)
	wantError(t, r, "NOT_FOUND")
	if string(r.data) != `{"chat":null}` {
		t.Errorf("chat after the delete = %s, want null", r.data)
	}

	var list struct{ Chats chatConn }
	r = e.ok(key, chatsPage, map[string]any{"first": 3}, &list)
	wantCalls(t, r, 1)
	if got := chatTitles(list.Chats.Nodes); !slices.Equal(got, rest[:3]) || list.Chats.TotalCount != len(rest) {
		t.Errorf("chats after the delete = %v (totalCount %d), want %v of %d", got, list.Chats.TotalCount, rest[:3], len(rest))
	}

	// Cursors taken before the delete: after chat 2 (the deleted chat came
	// before it) the next window is still chats 3 and 4; after the deleted
	// chat itself, it is what followed it, chats 2 and 3.
	for _, tc := range []struct {
		name, cursor string
		want         []string
	}{
		{"after a later chat", afterThird, titles[3:5]},
		{"after the deleted chat", afterVictim, titles[2:4]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var next struct{ Chats chatConn }
			r := e.ok(key, chatsPage, map[string]any{"first": 2, "after": tc.cursor}, &next)
			wantCalls(t, r, repeatCalls)
			if got := chatTitles(next.Chats.Nodes); !slices.Equal(got, tc.want) || next.Chats.TotalCount != len(rest) || !next.Chats.PageInfo.HasNextPage {
				t.Errorf("chats(first: 2, after: kept cursor) = %v (totalCount %d, %+v), want %v of %d", got, next.Chats.TotalCount, next.Chats.PageInfo, tc.want, len(rest))
			}
		})
	}

	for _, tc := range []struct{ name, id string }{
		{"deleted again", victim.ID},
		{"unknown chat", "6f1c7d0e-4c57-4bde-9a3c-3f6c1b8a0d11"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out deletePayload
			r := e.ok(key, deleteChat, map[string]any{"in": map[string]any{"id": tc.id}}, &out)
			wantCalls(t, r, 1)
			if out.DeleteChat == nil || out.DeleteChat.DeletedChatID != nil {
				t.Fatalf("deleteChat = %s, want no deleted id", r.data)
			}
			wantOneUserError(t, out.DeleteChat.UserErrors, "NOT_FOUND", "input", "id")
		})
	}
	t.Run("id not a UUID", func(t *testing.T) {
		var out deletePayload
		r := e.ok(key, deleteChat, map[string]any{"in": map[string]any{"id": "1 OR 1=1"}}, &out)
		wantCalls(t, r, 0)
		wantOneUserError(t, out.DeleteChat.UserErrors, "INVALID_ID", "input", "id")
	})
	t.Run("read-only key", func(t *testing.T) {
		demo := e.upstream.Chats(restclienttest.DemoKey)[0]
		r := e.do(restclienttest.ReadOnlyKey, deleteChat, map[string]any{"in": map[string]any{"id": demo.ID}})
		wantCalls(t, r, 1)
		wantError(t, r, "FORBIDDEN")
		if got := e.upstream.Chats(restclienttest.DemoKey)[0]; got.ID != demo.ID {
			t.Errorf("the read-only key deleted %s", demo.Title)
		}
	})
}

type categoryPayload struct {
	CreateCategory *struct {
		Category         *categoryNode `json:"category"`
		UserErrors       []userError   `json:"userErrors"`
		ClientMutationID *string       `json:"clientMutationId"`
		ConfirmedByRead  bool          `json:"confirmedByRead"`
	} `json:"createCategory"`
}

const createCategory = `mutation($in: CreateCategoryInput!) { createCategory(input: $in) {
  clientMutationId confirmedByRead userErrors { field message code }
  category { id name classification color subcategoriesCount parent { id name } } } }`

const categoryTree = `query($id: ID!) {
  categories(first: 100) { totalCount nodes { id name } }
  category(id: $id) { subcategoriesCount subcategories(first: 100) { totalCount nodes { name } } } }`

type categoryTreeAnswer struct {
	Categories categoryConn
	Category   categoryNode
}

// createCategory (Sure v0.7.1): one call, the category as the server made
// it, with no classification invented; the next read sees it, in the list
// and among its parent's subcategories, also with the answer cache on and
// within one batch whose earlier operation read the family. What the server
// refuses (a taken name, a third level) is a user error; a blank name costs
// no call; a read-only key is FORBIDDEN.
func TestCreateCategory(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []envOption
	}{{"no cache", nil}, {"cache", []envOption{withAnswerCache}}} {
		t.Run(tc.name, func(t *testing.T) { testCreateCategory(t, newEnv(t, tc.opts...)) })
	}
}

func testCreateCategory(t *testing.T, e *env) {
	key := restclienttest.DemoKey
	food, ok := e.upstream.CategoryByName(key, "Food & Drink")
	if !ok {
		t.Fatal("the demo seed has no Food & Drink")
	}
	var sub restclienttest.Category
	for _, c := range e.upstream.Categories(key) {
		if c.ParentID == food.ID {
			sub = c
		}
	}
	familySize := len(e.upstream.Categories(key))

	// Read first: the family and the parent's subcategories.
	var before categoryTreeAnswer
	e.ok(key, categoryTree, map[string]any{"id": food.ID}, &before)
	if before.Categories.TotalCount != familySize {
		t.Fatalf("totalCount = %d, want %d", before.Categories.TotalCount, familySize)
	}
	kids := before.Category.SubcategoriesCount

	// A root category.
	var out categoryPayload
	r := e.ok(key, createCategory, map[string]any{"in": map[string]any{"name": "Pet care", "color": "#0ea5e9", "clientMutationId": "c1"}}, &out)
	wantCalls(t, r, 1)
	p := out.CreateCategory
	if p == nil || p.Category == nil || len(p.UserErrors) != 0 || p.ClientMutationID == nil || *p.ClientMutationID != "c1" || p.ConfirmedByRead {
		t.Fatalf("createCategory = %s", r.data)
	}
	if c := p.Category; c.Name != "Pet care" || c.Color != "#0ea5e9" || c.Parent != nil || c.SubcategoriesCount != 0 || c.Classification != "" || !strings.Contains(string(r.data), `"classification":null`) {
		t.Errorf("category = %s, want Pet care, #0ea5e9, a root, classification null", r.data)
	}
	// A subcategory.
	r = e.ok(key, createCategory, map[string]any{"in": map[string]any{"name": "Street food", "parentId": food.ID}}, &out)
	wantCalls(t, r, 1)
	if c := out.CreateCategory.Category; c == nil || c.Name != "Street food" || c.Parent == nil || c.Parent.ID != food.ID || c.Parent.Name != food.Name || c.Color != food.Color {
		t.Errorf("subcategory = %s, want a child of %s with its color %s", r.data, food.Name, food.Color)
	}

	// The next read sees both.
	var after categoryTreeAnswer
	r = e.ok(key, categoryTree, map[string]any{"id": food.ID}, &after)
	if r.calls == 0 {
		t.Error("the read after the writes was answered from what was read before them")
	}
	if after.Categories.TotalCount != familySize+2 || !slices.Contains(names(after.Categories.Nodes), "Pet care") || !slices.Contains(names(after.Categories.Nodes), "Street food") {
		t.Errorf("categories after the writes = %v (totalCount %d), want Pet care and Street food among %d", names(after.Categories.Nodes), after.Categories.TotalCount, familySize+2)
	}
	if got := names(after.Categories.Nodes); !slices.Equal(got, seedNames(e.upstream.Categories(key))) {
		t.Errorf("categories = %v, want the family in name order", got)
	}
	if s := after.Category; s.SubcategoriesCount != kids+1 || s.Subcategories == nil || !slices.Contains(names(s.Subcategories.Nodes), "Street food") || s.Subcategories.TotalCount != kids+1 {
		t.Errorf("Food & Drink after the write = %d subcategories %+v, want %d with Street food", s.SubcategoriesCount, s.Subcategories, kids+1)
	}

	// Within one batch: an earlier operation read the family, a later one
	// reads it after the write.
	res := postBatch(t, e, key, []batchOp{
		{Query: categoryTree, Variables: map[string]any{"id": food.ID}},
		{Query: createCategory, Variables: map[string]any{"in": map[string]any{"name": "Vet bills", "parentId": food.ID}}},
		{Query: categoryTree, Variables: map[string]any{"id": food.ID}},
	}, "")
	if calls := res.callsOf(); calls[1] != 1 || calls[2] == 0 {
		t.Errorf("calls of the batch's operations = %v, want the write 1 and the read after it at least 1", calls)
	}
	var batched categoryTreeAnswer
	if err := json.Unmarshal(res.answers[2].Data, &batched); err != nil || len(res.answers[2].Errors) > 0 {
		t.Fatalf("the batch's last answer: %v %v", err, res.answers[2].Errors)
	}
	if !slices.Contains(names(batched.Categories.Nodes), "Vet bills") || batched.Categories.TotalCount != familySize+3 ||
		batched.Category.SubcategoriesCount != kids+2 || !slices.Contains(names(batched.Category.Subcategories.Nodes), "Vet bills") {
		t.Errorf("the batch's read after the write = %s, want Vet bills in the list and under %s", res.answers[2].Data, food.Name)
	}

	// What the server refuses.
	for _, tc := range []struct {
		name  string
		in    map[string]any
		code  string
		field []string
		calls int
	}{
		{"name taken", map[string]any{"name": "Pet care"}, "TAKEN", []string{"input", "name"}, 1},
		{"a parent that is a subcategory", map[string]any{"name": "Third level", "parentId": sub.ID}, "INVALID", []string{"input", "parentId"}, 1},
		{"a parent of another family", map[string]any{"name": "Elsewhere", "parentId": e.upstream.Categories(restclienttest.OtherFamilyKey)[0].ID}, "INVALID", []string{"input", "parentId"}, 1},
		{"blank name", map[string]any{"name": " "}, "BLANK", []string{"input", "name"}, 0},
		{"parent id not a UUID", map[string]any{"name": "x", "parentId": "food"}, "INVALID_ID", []string{"input", "parentId"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out categoryPayload
			r := e.ok(key, createCategory, map[string]any{"in": tc.in}, &out)
			wantCalls(t, r, tc.calls)
			if out.CreateCategory == nil || out.CreateCategory.Category != nil {
				t.Fatalf("createCategory = %s, want no category", r.data)
			}
			wantOneUserError(t, out.CreateCategory.UserErrors, tc.code, tc.field...)
		})
	}
	// Sure joins the messages of all failed validations into one (", "):
	// each is its own user error, on its own field, with its own code.
	t.Run("taken name and invalid color", func(t *testing.T) {
		var out categoryPayload
		r := e.ok(key, createCategory, map[string]any{"in": map[string]any{"name": "Pet care", "color": "red"}}, &out)
		wantCalls(t, r, 1)
		want := []userError{
			{Field: []string{"input", "color"}, Message: "Color is invalid", Code: "INVALID"},
			{Field: []string{"input", "name"}, Message: "Name has already been taken", Code: "TAKEN"},
		}
		if out.CreateCategory == nil || !slices.EqualFunc(out.CreateCategory.UserErrors, want, func(a, b userError) bool {
			return slices.Equal(a.Field, b.Field) && a.Message == b.Message && a.Code == b.Code
		}) {
			t.Errorf("createCategory = %s, want the user errors %+v", r.data, want)
		}
	})
	t.Run("read-only key", func(t *testing.T) {
		r := e.do(restclienttest.ReadOnlyKey, createCategory, map[string]any{"in": map[string]any{"name": "Read only"}})
		wantCalls(t, r, 1)
		wantError(t, r, "FORBIDDEN")
		if _, made := e.upstream.CategoryByName(key, "Read only"); made {
			t.Error("the read-only key created a category")
		}
	})
	if got := len(e.upstream.Categories(key)); got != familySize+3 {
		t.Errorf("the family has %d categories, want %d", got, familySize+3)
	}
}

// A server older than v0.7.1 has no POST /categories (its router answers
// 404): createCategory is null with UNSUPPORTED_BY_UPSTREAM, for the one
// call that shows it, then for none, for every key of that server.
func TestCreateCategory_UnsupportedByALegacyServer(t *testing.T) {
	e := newEnv(t, withUpstream(restclienttest.WithVersion(restclienttest.Legacy)))
	r := e.do(restclienttest.DemoKey, createCategory, map[string]any{"in": map[string]any{"name": "Pet care"}})
	wantCalls(t, r, 1)
	got := wantError(t, r, "UNSUPPORTED_BY_UPSTREAM")
	if string(r.data) != `{"createCategory":null}` || !containsAll(got.Message, "version", "category creation") {
		t.Errorf("data %s, error %q: want the field null and a message saying the server's version cannot create categories", r.data, got.Message)
	}
	for _, k := range []string{restclienttest.DemoKey, restclienttest.OtherFamilyKey, restclienttest.ReadOnlyKey} {
		r = e.do(k, createCategory, map[string]any{"in": map[string]any{"name": "Pet care"}})
		wantCalls(t, r, 0)
		wantError(t, r, "UNSUPPORTED_BY_UPSTREAM")
	}
	if _, made := e.upstream.CategoryByName(restclienttest.DemoKey, "Pet care"); made {
		t.Error("a category was created")
	}
}

// A createChat whose payload reads the chat's messages shows the first
// message: today's server answers "messages": [] (one read more, counted),
// an older one answered them.
func TestCreateChat_PayloadShowsTheFirstMessage(t *testing.T) {
	forEachVersion(t, func(t *testing.T, e *env, v restclienttest.Version) {
		var out struct {
			CreateChat struct {
				Chat *struct {
					ID           string
					MessageCount int
					Messages     struct {
						TotalCount int
						Nodes      []struct{ Role, Content string }
					}
				}
				UserErrors []userError
			}
		}
		r := e.ok(restclienttest.DemoKey, `mutation { createChat(input: {title: "Taxes", message: "What can I deduct?"}) {
			userErrors { code } chat { id messageCount messages { totalCount nodes { role content } } } } }`, nil, &out)
		want := 2
		if v == restclienttest.Legacy {
			want = 1
		}
		wantCalls(t, r, want)
		c := out.CreateChat.Chat
		if c == nil || c.MessageCount != 1 || c.Messages.TotalCount != 1 || len(c.Messages.Nodes) != 1 ||
			c.Messages.Nodes[0].Role != "user" || c.Messages.Nodes[0].Content != "What can I deduct?" {
			t.Errorf("createChat = %s, want the chat with its one message", r.data)
		}
	})
}

const newestMessages = `query($id: ID!) { chat(id: $id) { messageCount messages(last: 5) { nodes { role content } } } }`

type newestAnswer struct {
	Chat struct {
		MessageCount int
		Messages     struct {
			Nodes []struct{ Role, Content string }
		}
	}
}

// newest returns the role and content of the newest message of a.
func (a newestAnswer) newest() (role, content string) {
	n := a.Chat.Messages.Nodes
	if len(n) == 0 {
		return "", ""
	}
	return n[len(n)-1].Role, n[len(n)-1].Content
}

// A chat frontend sends a message, then reads the chat until the
// assistant's reply appears (the fake's clock, moved by hand, makes it due:
// nothing sleeps). With the answer cache on: the reads before the send
// (cached) are not reused after it; while the reply is pending every read
// asks the server; the first read once it is due sees it.
func TestSendChatMessage_ReadUntilTheReplyAppears(t *testing.T) {
	forEachVersion(t, testSendThenRead, withAnswerCache)
}

func testSendThenRead(t *testing.T, e *env, v restclienttest.Version) {
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	e.upstream.SetClock(clock.now)
	const delay = 30 * time.Second
	e.upstream.SetAssistant(delay)
	key := restclienttest.DemoKey
	chat := chatByTitle(t, e, key, "Budget check for January")
	vars := map[string]any{"id": chat.ID}
	read := func(calls int) newestAnswer {
		t.Helper()
		var out newestAnswer
		r := e.ok(key, newestMessages, vars, &out)
		wantCalls(t, r, calls)
		return out
	}

	// Before the send: read, then answered from the cache.
	read(1)
	if got := read(0); got.Chat.MessageCount != chat.MessageCount {
		t.Fatalf("messageCount = %d, want %d", got.Chat.MessageCount, chat.MessageCount)
	}

	const question = "Did I stay under budget on dining out?"
	var sent sendPayload
	r := e.ok(key, sendMessage, map[string]any{"in": map[string]any{"chatId": chat.ID, "content": question}}, &sent)
	wantCalls(t, r, 1)
	if sent.SendChatMessage == nil || sent.SendChatMessage.Message == nil {
		t.Fatalf("sendChatMessage = %s", r.data)
	}

	// Pending: each read asks the server (1 call), none is kept.
	var elapsed time.Duration
	for _, step := range []time.Duration{0, 0, delay / 2, delay/2 - time.Second} {
		clock.advance(step)
		elapsed += step
		got := read(1)
		if role, content := got.newest(); role != "user" || content != question || got.Chat.MessageCount != chat.MessageCount+1 {
			t.Fatalf("%v after the send: newest %s %q of %d messages, want the question, newest of %d", elapsed, role, content, got.Chat.MessageCount, chat.MessageCount+1)
		}
	}

	// Due: the very next read sees the reply.
	clock.advance(time.Second)
	got := read(1)
	role, content := got.newest()
	if role != "assistant" || !strings.Contains(content, question) || got.Chat.MessageCount != chat.MessageCount+2 {
		t.Fatalf("once the reply is due: newest %s %q of %d messages, want the assistant's reply to %q, newest of %d",
			role, content, got.Chat.MessageCount, question, chat.MessageCount+2)
	}
	if n := got.Chat.Messages.Nodes; len(n) < 2 || n[len(n)-2].Role != "user" || n[len(n)-2].Content != question {
		t.Errorf("messages = %+v, want the question just before the reply", n)
	}
	// The key's chat answers stay uncached for restcache.ReplyWait after a
	// send (a reply may take a minute): the next read asks again, and
	// sees the same.
	if again := read(1); !slices.Equal(again.Chat.Messages.Nodes, got.Chat.Messages.Nodes) {
		t.Errorf("read again = %+v, want %+v", again.Chat.Messages.Nodes, got.Chat.Messages.Nodes)
	}
}

// The reply must not be hidden either by what other reads of the chat
// cached while it was pending: the chat list (its message count and last
// message time) and a page of a long chat that does not hold the newest
// message (its message count). A chat frontend shows both.
func TestSendChatMessage_ReplyNotHiddenByOtherCachedReads(t *testing.T) {
	forEachVersion(t, testReplyNotHiddenByOtherCachedReads, withAnswerCache)
}

func testReplyNotHiddenByOtherCachedReads(t *testing.T, e *env, v restclienttest.Version) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: start}
	e.upstream.SetClock(clock.now)
	const delay = 30 * time.Second
	e.upstream.SetAssistant(delay)
	key := restclienttest.DemoKey
	long := longDemoChat(t, e)
	const list = `{ chats(first: 10) { nodes { id messageCount lastMessageAt } } }`
	const head = `query($id: ID!) { chat(id: $id) { messageCount messages(first: 3) { nodes { role } } } }`
	readBoth := func() (listed chatNode, count int) {
		t.Helper()
		var l struct{ Chats chatConn }
		e.ok(key, list, nil, &l)
		for _, c := range l.Chats.Nodes {
			if c.ID == long.ID {
				listed = c
			}
		}
		var h struct{ Chat chatNode }
		e.ok(key, head, map[string]any{"id": long.ID}, &h)
		return listed, h.Chat.MessageCount
	}

	e.ok(key, sendMessage, map[string]any{"in": map[string]any{"chatId": long.ID, "content": "And in January 2026?"}}, nil)
	// Read while the reply is pending (the list and the chat's first page).
	listed, count := readBoth()
	if listed.MessageCount != 121 || count != 121 {
		t.Fatalf("while pending: listed %d, counted %d messages, want 121", listed.MessageCount, count)
	}

	clock.advance(delay)
	replied := start.Add(delay).Format(time.RFC3339)
	listed, count = readBoth()
	if listed.MessageCount != 122 || listed.LastMessageAt == nil || *listed.LastMessageAt != replied {
		t.Errorf("DEFECT: once the reply is due, chats lists the chat with %d messages, the last at %v; want 122, the last at %s: "+
			"the list page read while the reply was pending was cached, and hides the reply for the cache's TTL",
			listed.MessageCount, showPtr(listed.LastMessageAt), replied)
	}
	if count != 122 {
		t.Errorf("DEFECT: once the reply is due, chat(id) { messageCount messages(first: 3) } counts %d messages, want 122: "+
			"the chat's first page (which does not hold the newest message) was cached while the reply was pending, and hides it", count)
	}
}

// holdOneShow holds the answer to the next GET of a chat (once armed): the
// fake computes it when the request arrives, and it is written only when
// the test releases it. The other requests pass.
type holdOneShow struct {
	armed   atomic.Bool
	arrived chan struct{}
	release chan struct{}
}

func newHoldOneShow() *holdOneShow {
	return &holdOneShow{arrived: make(chan struct{}), release: make(chan struct{})}
}

func (h *holdOneShow) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/api/v1/chats/") || !h.armed.CompareAndSwap(true, false) {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r) // read now, before what the test does next
		close(h.arrived)
		select {
		case <-h.release:
		case <-r.Context().Done():
			return
		}
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// A read of the chat in flight when a message is sent was read before the
// send: the same read sent after the send must not share its execution
// (nor its GET), and sees the message. The read in flight answers what it
// read.
func TestSendChatMessage_ReadInFlightIsNotShared(t *testing.T) {
	for _, v := range versions {
		t.Run(v.String(), func(t *testing.T) {
			hold := newHoldOneShow()
			// The held read must not time out and be retried meanwhile.
			e := newEnv(t, withAnswerCache, withTimeout(time.Minute), withUpstream(restclienttest.WithVersion(v)), withUpstreamWrapper(hold.wrap))
			key := restclienttest.DemoKey
			chat := chatByTitle(t, e, key, "Budget check for January")
			vars := map[string]any{"id": chat.ID}

			hold.armed.Store(true)
			type answer struct {
				data json.RawMessage
				err  error
			}
			first := make(chan answer, 1)
			go func() {
				data, _, err := e.client(key).ExecRawWithExtensions(t.Context(), newestMessages, vars)
				first <- answer{data, err}
			}()
			safety := time.NewTimer(10 * time.Second) // only a failing facade waits this long
			defer safety.Stop()
			select {
			case <-hold.arrived:
			case <-safety.C:
				t.Fatal("the first read never reached the upstream")
			}

			const question = "Is this read after the send?"
			var sent sendPayload
			r := e.ok(key, sendMessage, map[string]any{"in": map[string]any{"chatId": chat.ID, "content": question}}, &sent)
			wantCalls(t, r, 1)

			// The same request, after the send, while the first is in flight.
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			before := e.upstream.Calls()
			data, _, err := e.client(key).ExecRawWithExtensions(ctx, newestMessages, vars)
			calls := e.upstream.Calls() - before
			close(hold.release)
			if err != nil {
				t.Fatalf("the read after the send: %v (it waited for the read in flight before the send?)", err)
			}
			var after newestAnswer
			if err := json.Unmarshal(data, &after); err != nil {
				t.Fatal(err)
			}
			if role, content := after.newest(); role != "user" || content != question || calls != 1 {
				t.Errorf("the read after the send: newest %s %q, %d calls; want the question, read with 1 call of its own", role, content, calls)
			}

			a := <-first
			var old newestAnswer
			if a.err != nil || json.Unmarshal(a.data, &old) != nil {
				t.Fatalf("the read in flight: %v %s", a.err, a.data)
			}
			if _, content := old.newest(); content == question || old.Chat.MessageCount != chat.MessageCount {
				t.Errorf("the read in flight = %s, want what it read before the send", a.data)
			}
		})
	}
}

// Text Sure's database cannot store (a NUL byte) would fail upstream with a
// 500, read as a write whose outcome is unknown: it is a user error of its
// field, at no call.
func TestWrites_UnstorableTextIsAUserError(t *testing.T) {
	e := newEnv(t)
	key := restclienttest.DemoKey
	chat := e.upstream.Chats(key)[0]
	for _, tc := range []struct {
		name, query string
		in          map[string]any
		field       string
	}{
		{"a message", sendMessage, map[string]any{"chatId": chat.ID, "content": "hello\x00there"}, "content"},
		{"a category's name", createCategory, map[string]any{"name": "Pets\x00"}, "name"},
		{"a category's icon", createCategory, map[string]any{"name": "Pets", "icon": "paw\x00"}, "icon"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(key, tc.query, map[string]any{"in": tc.in})
			wantCalls(t, r, 0)
			if len(r.errs) > 0 {
				t.Fatalf("errors %v, want a user error", r.errs)
			}
			want := `{"field":["input","` + tc.field + `"]`
			if !strings.Contains(string(r.data), want) || !strings.Contains(string(r.data), `"code":"INVALID"`) {
				t.Errorf("data = %s, want an INVALID user error of input.%s", r.data, tc.field)
			}
		})
	}
}
