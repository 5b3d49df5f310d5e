package restclienttest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const (
	yearChat    = "A year of spending, month by month" // 120 messages
	budgetChat  = "Budget check for January"
	groceryChat = "Where did my grocery money go?"
	errorChat   = "Net worth trend"
)

func TestChatsList(t *testing.T) {
	s := newFixed()
	got := decode[chatList](t, get(t, s, "/api/v1/chats", DemoKey))
	want := []struct {
		title string
		count int
		err   bool
	}{
		{budgetChat, 6, false},
		{groceryChat, 4, false},
		{errorChat, 3, true},
		{yearChat, 120, false},
	}
	if len(got.Chats) != len(want) {
		t.Fatalf("chats: got %d, want %d", len(got.Chats), len(want))
	}
	for i, w := range want {
		c := got.Chats[i]
		if c.Title != w.title || c.MessageCount != w.count || (c.Error != nil) != w.err {
			t.Errorf("chat %d: got %q with %d messages (error %v), want %q with %d (error %v)",
				i, c.Title, c.MessageCount, c.Error, w.title, w.count, w.err)
		}
		if c.FirstMessageAt == nil {
			t.Errorf("chat %q: got last_message_at null, want a time", c.Title)
		}
	}
	if want := (chatPagination{Page: 1, PerPage: nil, TotalCount: 4, TotalPages: 1}); !equalChatPagination(got.Pagination, want) {
		t.Errorf("pagination: got %v, want %v", got.Pagination, want)
	}

	t.Run("chat without messages", func(t *testing.T) {
		rec := get(t, s, "/api/v1/chats", OtherFamilyKey)
		got := decode[chatList](t, rec)
		if len(got.Chats) != 2 || got.Chats[0].Title != "Empty savings chat" {
			t.Fatalf("chats: got %+v, want the empty chat first of 2", got.Chats)
		}
		if !strings.Contains(rec.Body.String(), `"last_message_at":null,"message_count":0,"error":null`) {
			t.Errorf("body: got %s, want null last_message_at and error", rec.Body)
		}
	})
}

func TestChatsListIgnoresPerPage(t *testing.T) {
	tests := []struct {
		query     string
		wantPage  int
		wantItems int
	}{
		{"", 1, 20},
		{"per_page=5", 1, 20},
		{"per_page=100&page=2", 2, 20},
		{"page=13", 13, 10},
		{"page=99", 13, 10}, // overflow: the last page
		{"page=0", 1, 20},
	}
	for _, v := range versions {
		s := newFixedAs(v)
		newest := s.Chats(LargeFamilyKey)
		// Legacy reports the page size, Today null (pagy 9).
		wantPerPage := map[Version]*int{Today: nil, Legacy: intp(20)}[v]
		for _, tt := range tests {
			t.Run(v.String()+" "+tt.query, func(t *testing.T) {
				rec := get(t, s, "/api/v1/chats?"+tt.query, LargeFamilyKey)
				got := decode[chatList](t, rec)
				want := chatPagination{Page: tt.wantPage, PerPage: wantPerPage, TotalCount: 250, TotalPages: 13}
				if !equalChatPagination(got.Pagination, want) {
					t.Errorf("pagination: got %v, want %v", got.Pagination, want)
				}
				if v == Today && !strings.Contains(rec.Body.String(), `"per_page":null`) {
					t.Errorf("body: got %s, want \"per_page\":null", rec.Body)
				}
				if len(got.Chats) != tt.wantItems {
					t.Fatalf("chats: got %d, want %d", len(got.Chats), tt.wantItems)
				}
				if first := newest[(tt.wantPage-1)*20]; got.Chats[0].ID != first.ID {
					t.Errorf("first chat: got %q, want %q", got.Chats[0].Title, first.Title)
				}
			})
		}
	}
}

func TestChatShowPagesMessages(t *testing.T) {
	tests := []struct {
		version    Version
		query      string
		wantPage   int
		wantItems  int
		wantFirstQ string // first message of the page
	}{
		// Legacy: 50 a page, 25 months a page.
		{Legacy, "", 1, 50, "What did I spend in January 2021?"},
		{Legacy, "per_page=120", 1, 50, "What did I spend in January 2021?"},
		{Legacy, "page=2", 2, 50, "What did I spend in February 2023?"},
		{Legacy, "page=3", 3, 20, "What did I spend in March 2025?"},
		{Legacy, "page=9", 3, 20, "What did I spend in March 2025?"},
		// Today: 20 a page, 10 months a page, 6 pages.
		{Today, "", 1, 20, "What did I spend in January 2021?"},
		{Today, "per_page=120", 1, 20, "What did I spend in January 2021?"},
		{Today, "page=2", 2, 20, "What did I spend in November 2021?"},
		{Today, "page=6", 6, 20, "What did I spend in March 2025?"},
		{Today, "page=9", 6, 20, "What did I spend in March 2025?"},
	}
	for _, tt := range tests {
		t.Run(tt.version.String()+" "+tt.query, func(t *testing.T) {
			s := newFixedAs(tt.version)
			id := mustChat(t, s, DemoKey, yearChat).ID
			got := decode[chatJSON](t, get(t, s, "/api/v1/chats/"+id+"?"+tt.query, DemoKey))
			want := chatPagination{Page: tt.wantPage, PerPage: intp(50), TotalCount: 120, TotalPages: 3}
			if tt.version == Today {
				want = chatPagination{Page: tt.wantPage, PerPage: nil, TotalCount: 120, TotalPages: 6}
			}
			if got.Pagination == nil || !equalChatPagination(*got.Pagination, want) {
				t.Errorf("pagination: got %v, want %v", got.Pagination, want)
			}
			if len(got.Messages) != tt.wantItems {
				t.Fatalf("messages: got %d, want %d", len(got.Messages), tt.wantItems)
			}
			if got.Messages[0].Content != tt.wantFirstQ {
				t.Errorf("first message: got %q, want %q", got.Messages[0].Content, tt.wantFirstQ)
			}
			for i := 1; i < len(got.Messages); i++ {
				if got.Messages[i].CreatedAt < got.Messages[i-1].CreatedAt {
					t.Fatalf("messages: got %s before %s, want oldest first", got.Messages[i-1].CreatedAt, got.Messages[i].CreatedAt)
				}
			}
		})
	}
}

// rawChat is a chat decoded loosely, to see which keys are present.
type rawChat struct {
	Error    *string                      `json:"error"`
	Messages []map[string]json.RawMessage `json:"messages"`
}

func TestChatMessageShapes(t *testing.T) {
	s := newFixed()
	budget := decode[rawChat](t, get(t, s, "/api/v1/chats/"+mustChat(t, s, DemoKey, budgetChat).ID, DemoKey))
	grocery := decode[rawChat](t, get(t, s, "/api/v1/chats/"+mustChat(t, s, DemoKey, groceryChat).ID, DemoKey))
	failed := decode[rawChat](t, get(t, s, "/api/v1/chats/"+mustChat(t, s, DemoKey, errorChat).ID, DemoKey))

	tests := []struct {
		name          string
		msg           map[string]json.RawMessage
		wantType      string
		wantModel     bool
		wantToolCalls int // -1: no "tool_calls" key
	}{
		{"user message", budget.Messages[0], `"user_message"`, false, -1},
		{"assistant with one call", budget.Messages[1], `"assistant_message"`, true, 1},
		{"assistant with two calls", budget.Messages[3], `"assistant_message"`, true, 2},
		{"assistant without calls", budget.Messages[5], `"assistant_message"`, true, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(tt.msg["type"]); got != tt.wantType {
				t.Errorf("type: got %s, want %s", got, tt.wantType)
			}
			wantRole := `"user"`
			if tt.wantModel {
				wantRole = `"assistant"`
			}
			if got := string(tt.msg["role"]); got != wantRole {
				t.Errorf("role: got %s, want %s", got, wantRole)
			}
			if _, got := tt.msg["model"]; got != tt.wantModel {
				t.Errorf("model present: got %v, want %v", got, tt.wantModel)
			}
			raw, has := tt.msg["tool_calls"]
			if has != (tt.wantToolCalls >= 0) {
				t.Fatalf("tool_calls present: got %v, want %v", has, tt.wantToolCalls >= 0)
			}
			if !has {
				return
			}
			var calls []map[string]json.RawMessage
			if err := json.Unmarshal(raw, &calls); err != nil {
				t.Fatal(err)
			}
			if len(calls) != tt.wantToolCalls {
				t.Fatalf("tool calls: got %d, want %d", len(calls), tt.wantToolCalls)
			}
			for _, c := range calls {
				for _, key := range []string{"id", "function_name", "function_arguments", "function_result", "created_at"} {
					if _, ok := c[key]; !ok {
						t.Errorf("tool call: got no %q in %v", key, c)
					}
				}
				if !strings.HasPrefix(string(c["function_arguments"]), "{") {
					t.Errorf("function_arguments: got %s, want an object", c["function_arguments"])
				}
			}
		})
	}

	t.Run("null function_result", func(t *testing.T) {
		var calls []map[string]json.RawMessage
		if err := json.Unmarshal(grocery.Messages[1]["tool_calls"], &calls); err != nil {
			t.Fatal(err)
		}
		if got := string(calls[0]["function_result"]); got != "null" {
			t.Errorf("function_result: got %s, want null", got)
		}
		if got := string(calls[0]["function_name"]); got != `"get_transactions"` {
			t.Errorf("function_name: got %s, want \"get_transactions\"", got)
		}
	})
	t.Run("chat error", func(t *testing.T) {
		if failed.Error == nil || *failed.Error == "" {
			t.Errorf("error: got %v, want a message", failed.Error)
		}
		if budget.Error != nil {
			t.Errorf("error: got %q, want null", *budget.Error)
		}
	})
}

func TestChatNotFound(t *testing.T) {
	s := newFixed()
	tests := []struct{ name, id string }{
		{"unknown", seedID("no chat")},
		{"other user's", mustChat(t, s, OtherFamilyKey, "Vacation fund planning").ID},
		{"not a UUID", "budget"},
	}
	routes := []struct{ method, suffix string }{
		{http.MethodGet, ""},
		{http.MethodPatch, ""},
		{http.MethodDelete, ""},
		{http.MethodPost, "/messages"},
		{http.MethodPost, "/messages/retry"},
	}
	for _, tt := range tests {
		for _, r := range routes {
			t.Run(r.method+r.suffix+" "+tt.name, func(t *testing.T) {
				rec := serve(t, s, r.method, "/api/v1/chats/"+tt.id+r.suffix, DemoKey, withBody("application/json", `{"title":"x","content":"x"}`))
				wantJSON(t, rec, http.StatusNotFound, `{"error":"Chat not found"}`)
				// An endpoint's own 404 is an authenticated answer.
				if rec.Header().Get("X-RateLimit-Limit") == "" {
					t.Error("X-RateLimit-Limit: got none, want the rate-limit headers")
				}
			})
		}
	}
}

func TestChatAccessChecks(t *testing.T) {
	const (
		disabled = `{"error":"feature_disabled","message":"AI features are not enabled for this user"}`
		scope    = `{"error":"insufficient_scope","message":"This action requires the 'write' scope"}`
		// readOnlyNoAIKey exists only in this test: read scope AND no AI.
		readOnlyNoAIKey = "test-readonly-noai-key"
	)
	s := newFixed()
	s.keys[readOnlyNoAIKey] = &apiKey{family: s.keys[NoAIKey].family, user: s.keys[NoAIKey].user, scope: scopeRead, limit: limitStandard}
	chat := "/api/v1/chats/" + mustChat(t, s, DemoKey, budgetChat).ID
	body := withBody("application/json", `{"title":"Hello"}`)

	tests := []struct {
		name, key, method, target string
		wantStatus                int
		wantBody                  string
	}{
		{"no AI: list", NoAIKey, http.MethodGet, "/api/v1/chats", http.StatusForbidden, disabled},
		{"no AI: show", NoAIKey, http.MethodGet, chat, http.StatusForbidden, disabled},
		{"no AI: create", NoAIKey, http.MethodPost, "/api/v1/chats", http.StatusForbidden, disabled},
		{"no AI: update", NoAIKey, http.MethodPatch, chat, http.StatusForbidden, disabled},
		{"no AI: delete", NoAIKey, http.MethodDelete, chat, http.StatusForbidden, disabled},
		{"no AI: send", NoAIKey, http.MethodPost, chat + "/messages", http.StatusForbidden, disabled},
		{"no AI: retry", NoAIKey, http.MethodPost, chat + "/messages/retry", http.StatusForbidden, disabled},
		{"no AI: categories still work", NoAIKey, http.MethodGet, "/api/v1/categories", http.StatusOK, ""},
		// feature_disabled is checked before insufficient_scope.
		{"read-only without AI: create", readOnlyNoAIKey, http.MethodPost, "/api/v1/chats", http.StatusForbidden, disabled},
		{"read-only: create", ReadOnlyKey, http.MethodPost, "/api/v1/chats", http.StatusForbidden, scope},
		{"read-only: update", ReadOnlyKey, http.MethodPatch, chat, http.StatusForbidden, scope},
		{"read-only: update with PUT", ReadOnlyKey, http.MethodPut, chat, http.StatusForbidden, scope},
		{"read-only: delete", ReadOnlyKey, http.MethodDelete, chat, http.StatusForbidden, scope},
		{"read-only: send", ReadOnlyKey, http.MethodPost, chat + "/messages", http.StatusForbidden, scope},
		{"read-only: retry", ReadOnlyKey, http.MethodPost, chat + "/messages/retry", http.StatusForbidden, scope},
		{"read-only without AI: delete", readOnlyNoAIKey, http.MethodDelete, chat, http.StatusForbidden, disabled},
		{"read-only: list", ReadOnlyKey, http.MethodGet, "/api/v1/chats", http.StatusOK, ""},
		{"read-only: show", ReadOnlyKey, http.MethodGet, chat, http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(t, s, tt.method, tt.target, tt.key, body)
			if tt.wantBody == "" {
				wantStatus(t, rec, tt.wantStatus)
				return
			}
			wantJSON(t, rec, tt.wantStatus, tt.wantBody)
		})
	}
	if got := len(s.Chats(DemoKey)); got != 4 {
		t.Errorf("chats after refused writes: got %d, want 4", got)
	}
	if got := mustChat(t, s, DemoKey, budgetChat).MessageCount; got != 6 {
		t.Errorf("messages after refused sends: got %d, want 6", got)
	}
}

func TestCreateChatBody(t *testing.T) {
	const blankTitle = `{"error":"Failed to create chat","details":["Title can't be blank"]}`
	tests := []struct {
		name        string
		query       string
		contentType string
		body        string
		wantStatus  int
		wantTitle   string
	}{
		{"JSON", "", "application/json", `{"title":"Hello"}`, http.StatusCreated, "Hello"},
		{"JSON with charset", "", "application/json; charset=utf-8", `{"title":"Hello"}`, http.StatusCreated, "Hello"},
		// Without its Content-Type a JSON body is not read: no title.
		{"JSON without Content-Type", "", "", `{"title":"Hello"}`, http.StatusUnprocessableEntity, ""},
		{"JSON as text/plain", "", "text/plain", `{"title":"Hello"}`, http.StatusUnprocessableEntity, ""},
		{"form", "", "application/x-www-form-urlencoded", "title=From+a+form", http.StatusCreated, "From a form"},
		{"multipart form", "", "multipart/form-data; boundary=XX", "--XX\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nMultipart\r\n--XX--\r\n", http.StatusCreated, "Multipart"},
		{"title in the query string", "?title=Query", "", "", http.StatusCreated, "Query"},
		{"body overrides the query", "?title=Query", "application/json", `{"title":"Body"}`, http.StatusCreated, "Body"},
		{"numeric title", "", "application/json", `{"title":2026}`, http.StatusCreated, "2026"},
		{"boolean title", "", "application/json", `{"title":false}`, http.StatusCreated, "false"},
		{"missing title", "", "application/json", `{"message":"hi"}`, http.StatusUnprocessableEntity, ""},
		{"blank title", "", "application/json", `{"title":"  "}`, http.StatusUnprocessableEntity, ""},
		{"null title", "", "application/json", `{"title":null}`, http.StatusUnprocessableEntity, ""},
		{"object title", "", "application/json", `{"title":{"a":1}}`, http.StatusUnprocessableEntity, ""},
		{"array body", "", "application/json", `["Hello"]`, http.StatusUnprocessableEntity, ""},
		{"empty JSON body", "", "application/json", ``, http.StatusUnprocessableEntity, ""},
		{"malformed JSON", "", "application/json", `{"title":`, http.StatusBadRequest, ""},
		{"trailing data after JSON", "", "application/json", `{"title":"a"} x`, http.StatusBadRequest, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFixed()
			rec := serve(t, s, http.MethodPost, "/api/v1/chats"+tt.query, DemoKey, withBody(tt.contentType, tt.body))
			switch tt.wantStatus {
			case http.StatusUnprocessableEntity:
				wantJSON(t, rec, tt.wantStatus, blankTitle)
			case http.StatusBadRequest:
				wantJSON(t, rec, tt.wantStatus, `{"status":400,"error":"Bad Request"}`)
			default:
				wantStatus(t, rec, tt.wantStatus)
				if got := decode[chatJSON](t, rec).Title; got != tt.wantTitle {
					t.Errorf("title: got %q, want %q", got, tt.wantTitle)
				}
			}
			wantChats := 4
			if tt.wantStatus == http.StatusCreated {
				wantChats = 5
			}
			if got := len(s.Chats(DemoKey)); got != wantChats {
				t.Errorf("chats: got %d, want %d", got, wantChats)
			}
		})
	}
}

// wantWriteAnswer checks the chat a create or update answered: Legacy
// renders the first page of messages (50 a page) and its pagination; Today
// renders "messages": [] and no "pagination" at all, whatever the chat holds.
func wantWriteAnswer(t *testing.T, v Version, rec *httptest.ResponseRecorder, wantMessages int) chatJSON {
	t.Helper()
	raw := rawObject(t, rec)
	got := decode[chatJSON](t, rec)
	_, hasPagination := raw["pagination"]
	switch v {
	case Today:
		if string(raw["messages"]) != "[]" || hasPagination {
			t.Errorf("answer: got messages %s and pagination %v, want [] and no pagination key", raw["messages"], hasPagination)
		}
	case Legacy:
		want := chatPagination{Page: 1, PerPage: intp(50), TotalCount: wantMessages, TotalPages: 1}
		if got.Pagination == nil || !equalChatPagination(*got.Pagination, want) {
			t.Errorf("pagination: got %v, want %v", got.Pagination, want)
		}
		if len(got.Messages) != wantMessages {
			t.Errorf("messages: got %d, want %d", len(got.Messages), wantMessages)
		}
	}
	return got
}

func TestCreateChatThenList(t *testing.T) {
	for _, v := range versions {
		t.Run(v.String(), func(t *testing.T) { testCreateChatThenList(t, v) })
	}
}

func testCreateChatThenList(t *testing.T, v Version) {
	s := newFixedAs(v)
	rec := serve(t, s, http.MethodPost, "/api/v1/chats", DemoKey,
		withBody("application/json", `{"title":"New chat","message":"How much did I spend on coffee?","model":"gpt-4.1-mini"}`))
	wantStatus(t, rec, http.StatusCreated)
	if !strings.Contains(rec.Body.String(), `"error":null`) {
		t.Errorf("body: got %s, want \"error\":null", rec.Body)
	}
	created := wantWriteAnswer(t, v, rec, 1)
	now := iso8601(fixedNow)
	if created.CreatedAt != now || created.UpdatedAt != now {
		t.Errorf("timestamps: got %s/%s, want %s from the clock", created.CreatedAt, created.UpdatedAt, now)
	}
	// The chat holds the message, whatever the answer showed.
	shown := decode[chatJSON](t, get(t, s, "/api/v1/chats/"+created.ID, DemoKey))
	if len(shown.Messages) != 1 {
		t.Fatalf("messages shown: got %d, want 1", len(shown.Messages))
	}
	if m := shown.Messages[0]; m.Type != "user_message" || m.Role != "user" || m.Content != "How much did I spend on coffee?" || m.Model != nil {
		t.Errorf("message: got %+v, want the user's message, without model", m)
	}
	// The model is kept with the message, though a user message does not show it.
	if got := s.keys[DemoKey].user.chatByID[created.ID].messages[0].model; got != "gpt-4.1-mini" {
		t.Errorf("stored model: got %q, want %q", got, "gpt-4.1-mini")
	}

	for _, key := range []string{DemoKey, ReadOnlyKey} { // same user
		list := decode[chatList](t, get(t, s, "/api/v1/chats", key))
		first := list.Chats[0]
		if first.ID != created.ID || first.MessageCount != 1 || first.FirstMessageAt == nil || *first.FirstMessageAt != now {
			t.Errorf("%s: first chat: got %+v, want the new chat with 1 message at %s", key, first, now)
		}
		if list.Pagination.TotalCount != 5 {
			t.Errorf("%s: total_count: got %d, want 5", key, list.Pagination.TotalCount)
		}
	}
	if got := s.Chats(DemoKey)[0].ID; got != created.ID {
		t.Errorf("Chats()[0]: got %q, want %q", got, created.ID)
	}
	if got := len(s.Chats(OtherFamilyKey)); got != 2 {
		t.Errorf("other user's chats: got %d, want 2", got)
	}

	t.Run("without message, default model", func(t *testing.T) {
		rec := serve(t, s, http.MethodPost, "/api/v1/chats", DemoKey, withBody("application/json", `{"title":"Quiet","message":"  "}`))
		wantWriteAnswer(t, v, rec, 0)
		if !strings.Contains(rec.Body.String(), `"messages":[]`) {
			t.Errorf("body: got %s, want no messages", rec.Body)
		}
		second := decode[chatJSON](t, serve(t, s, http.MethodPost, "/api/v1/chats", DemoKey, withBody("application/json", `{"title":"Talk","message":"Hi"}`)))
		if got := s.keys[DemoKey].user.chatByID[second.ID].messages[0].model; got != defaultModel {
			t.Errorf("stored model: got %q, want %q", got, defaultModel)
		}
		// Same clock time: the later-created chat still comes first.
		if got := s.Chats(DemoKey)[0].ID; got != second.ID {
			t.Errorf("Chats()[0]: got %q, want the latest %q", got, second.ID)
		}
	})
}

func TestUpdateChat(t *testing.T) {
	const blankTitle = `{"error":"Failed to update chat","details":["Title can't be blank"]}`
	tests := []struct {
		name        string
		method      string
		contentType string
		body        string
		wantStatus  int
		wantTitle   string
		wantTouched bool // updated_at moved to the clock
	}{
		{"rename", http.MethodPatch, "application/json", `{"title":"Renamed"}`, http.StatusOK, "Renamed", true},
		{"rename with PUT", http.MethodPut, "application/json", `{"title":"Renamed"}`, http.StatusOK, "Renamed", true},
		{"same title", http.MethodPatch, "application/json", `{"title":"` + budgetChat + `"}`, http.StatusOK, budgetChat, false},
		{"no title", http.MethodPatch, "application/json", `{}`, http.StatusOK, budgetChat, false},
		// Not read without its Content-Type: nothing to update, 200.
		{"JSON without Content-Type", http.MethodPatch, "", `{"title":"Renamed"}`, http.StatusOK, budgetChat, false},
		{"blank title", http.MethodPatch, "application/json", `{"title":""}`, http.StatusUnprocessableEntity, "", false},
		{"null title", http.MethodPatch, "application/json", `{"title":null}`, http.StatusUnprocessableEntity, "", false},
	}
	for _, v := range versions {
		for _, tt := range tests {
			t.Run(v.String()+" "+tt.name, func(t *testing.T) {
				s := newFixedAs(v)
				before := mustChat(t, s, DemoKey, budgetChat)
				rec := serve(t, s, tt.method, "/api/v1/chats/"+before.ID, DemoKey, withBody(tt.contentType, tt.body))
				if tt.wantStatus != http.StatusOK {
					wantJSON(t, rec, tt.wantStatus, blankTitle)
					return
				}
				got := wantWriteAnswer(t, v, rec, 6)
				wantUpdated := iso8601(before.UpdatedAt)
				if tt.wantTouched {
					wantUpdated = iso8601(fixedNow)
				}
				if got.Title != tt.wantTitle || got.UpdatedAt != wantUpdated {
					t.Errorf("chat: got %q updated %s, want %q updated %s", got.Title, got.UpdatedAt, tt.wantTitle, wantUpdated)
				}
				if after := s.Chats(DemoKey)[0]; after.Title != tt.wantTitle || after.MessageCount != 6 {
					t.Errorf("stored chat: got %q with %d messages, want %q with 6", after.Title, after.MessageCount, tt.wantTitle)
				}
			})
		}
	}
}
