package facade_test

import (
	"slices"
	"strings"
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
	t.Parallel()
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
	t.Parallel()
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

// A createChat whose payload reads the chat's messages shows the first
// message: today's server answers "messages": [] (one read more, counted),
// an older one answered them.
func TestCreateChat_PayloadShowsTheFirstMessage(t *testing.T) {
	t.Parallel()
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

// Text Sure's database cannot store (a NUL byte) would fail upstream with a
// 500, read as a write whose outcome is unknown: it is a user error of its
// field, at no call.
func TestWrites_UnstorableTextIsAUserError(t *testing.T) {
	t.Parallel()
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
