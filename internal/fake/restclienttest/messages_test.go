package restclienttest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func sendMessage(t *testing.T, s *Server, key, chatID, body string) *httptest.ResponseRecorder {
	t.Helper()
	return serve(t, s, http.MethodPost, "/api/v1/chats/"+chatID+"/messages", key, withBody("application/json", body))
}

func TestSendMessage(t *testing.T) {
	for _, v := range versions {
		t.Run(v.String(), func(t *testing.T) {
			s := newFixedAs(v)
			chat := mustChat(t, s, DemoKey, budgetChat)
			rec := sendMessage(t, s, DemoKey, chat.ID, `{"content":"What about February?","model":"gpt-4.1-mini"}`)
			wantStatus(t, rec, http.StatusCreated)
			got := decode[sentMessageJSON](t, rec)
			now := iso8601(fixedNow)
			want := sentMessageJSON{
				ID: got.ID, ChatID: chat.ID, Type: "user_message", Role: "user", Content: "What about February?",
				CreatedAt: now, UpdatedAt: now, AIResponseStatus: "pending", AIResponseMessage: "AI response is being generated",
			}
			if got != want {
				t.Errorf("message: got %+v, want %+v", got, want)
			}
			raw := rawObject(t, rec)
			if _, ok := raw["model"]; ok || len(raw) != 9 {
				t.Errorf("body: got %s, want nine keys, no model on a user message", rec.Body)
			}
			// The chat holds it; the list follows.
			after := mustChat(t, s, DemoKey, budgetChat)
			if after.MessageCount != 7 || !after.UpdatedAt.Equal(fixedNow) {
				t.Errorf("chat: got %d messages updated %s, want 7 updated %s", after.MessageCount, after.UpdatedAt, fixedNow)
			}
			// Sure's last_message_at is the oldest message's time: a new
			// message leaves it.
			oldest := iso8601(s.keys[DemoKey].user.chatByID[chat.ID].messages[0].createdAt)
			first := decode[chatList](t, get(t, s, "/api/v1/chats", DemoKey)).Chats[0]
			if first.ID != chat.ID || first.MessageCount != 7 || first.FirstMessageAt == nil || *first.FirstMessageAt != oldest || oldest == now {
				t.Errorf("list: got %+v, want the chat with 7 messages, last_message_at its oldest's, %s", first, oldest)
			}
			stored := s.keys[DemoKey].user.chatByID[chat.ID].messages[6]
			if stored.id != got.ID || stored.model != "gpt-4.1-mini" || stored.assistant {
				t.Errorf("stored: got %+v, want the user message with its model", stored)
			}
		})
	}
}

func TestSendMessageRefused(t *testing.T) {
	const blankContent = `{"error":"Failed to create message","details":["Content can't be blank"]}`
	tests := []struct {
		name        string
		contentType string
		body        string
		wantStatus  int
		wantBody    string
	}{
		{"no content", "application/json", `{"model":"gpt-4.1"}`, http.StatusUnprocessableEntity, blankContent},
		{"blank content", "application/json", `{"content":"   "}`, http.StatusUnprocessableEntity, blankContent},
		{"null content", "application/json", `{"content":null}`, http.StatusUnprocessableEntity, blankContent},
		{"JSON without Content-Type", "", `{"content":"Hi"}`, http.StatusUnprocessableEntity, blankContent},
		{"malformed JSON", "application/json", `{"content":`, http.StatusBadRequest, `{"status":400,"error":"Bad Request"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFixed()
			s.SetAssistant(0)
			chat := mustChat(t, s, DemoKey, budgetChat)
			rec := serve(t, s, http.MethodPost, "/api/v1/chats/"+chat.ID+"/messages", DemoKey, withBody(tt.contentType, tt.body))
			wantJSON(t, rec, tt.wantStatus, tt.wantBody)
			if got := mustChat(t, s, DemoKey, budgetChat).MessageCount; got != 6 {
				t.Errorf("messages: got %d, want 6 (nothing sent, nothing answered)", got)
			}
		})
	}
}

func TestSendMessageDefaultModel(t *testing.T) {
	s := newFixed()
	chat := mustChat(t, s, OtherFamilyKey, "Empty savings chat")
	wantStatus(t, sendMessage(t, s, OtherFamilyKey, chat.ID, `{"content":"Hello","model":" "}`), http.StatusCreated)
	if got := s.keys[OtherFamilyKey].user.chatByID[chat.ID].messages[0].model; got != defaultModel {
		t.Errorf("model: got %q, want %q", got, defaultModel)
	}
}

func TestDeleteChat(t *testing.T) {
	for _, v := range versions {
		t.Run(v.String(), func(t *testing.T) {
			s := newFixedAs(v)
			chat := mustChat(t, s, DemoKey, groceryChat)
			rec := serve(t, s, http.MethodDelete, "/api/v1/chats/"+chat.ID, DemoKey)
			wantStatus(t, rec, http.StatusNoContent)
			if rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != "" {
				t.Errorf("answer: got body %q, Content-Type %q, want neither", rec.Body, rec.Header().Get("Content-Type"))
			}
			wantRateHeaders(t, rec, 1000, 999, 1242)

			list := decode[chatList](t, get(t, s, "/api/v1/chats", DemoKey))
			if list.Pagination.TotalCount != 3 {
				t.Errorf("total_count: got %d, want 3", list.Pagination.TotalCount)
			}
			for _, c := range list.Chats {
				if c.ID == chat.ID {
					t.Error("list: got the deleted chat")
				}
			}
			for _, method := range []string{http.MethodGet, http.MethodDelete} {
				wantJSON(t, serve(t, s, method, "/api/v1/chats/"+chat.ID, DemoKey), http.StatusNotFound, `{"error":"Chat not found"}`)
			}
			// Creating after a delete still orders chats newest first.
			created := decode[chatJSON](t, serve(t, s, http.MethodPost, "/api/v1/chats", DemoKey, withBody("application/json", `{"title":"After"}`)))
			if got := s.Chats(DemoKey); len(got) != 4 || got[0].ID != created.ID {
				t.Errorf("chats: got %+v, want 4, the new one first", got)
			}
		})
	}
}

func TestRetryMessage(t *testing.T) {
	for _, v := range versions {
		t.Run(v.String(), func(t *testing.T) {
			s := newFixedAs(v)
			// The chat ends with the assistant's answer: retrying would create
			// an empty assistant message, which fails validation.
			budget := mustChat(t, s, DemoKey, budgetChat)
			wantJSON(t, serve(t, s, http.MethodPost, "/api/v1/chats/"+budget.ID+"/messages/retry", DemoKey),
				http.StatusInternalServerError, `{"error":"internal_server_error","message":"An unexpected error occurred"}`)
			// The chat ends with the user's question: nothing to retry.
			failed := mustChat(t, s, DemoKey, errorChat)
			wantJSON(t, serve(t, s, http.MethodPost, "/api/v1/chats/"+failed.ID+"/messages/retry", DemoKey),
				http.StatusUnprocessableEntity, `{"error":"No assistant message to retry"}`)
			empty := mustChat(t, s, OtherFamilyKey, "Empty savings chat")
			wantJSON(t, serve(t, s, http.MethodPost, "/api/v1/chats/"+empty.ID+"/messages/retry", OtherFamilyKey),
				http.StatusUnprocessableEntity, `{"error":"No assistant message to retry"}`)
			if got := mustChat(t, s, DemoKey, budgetChat).MessageCount; got != 6 {
				t.Errorf("messages: got %d, want 6", got)
			}
		})
	}
}

// TestAssistantReplies: a reply appears only once the fake's clock reaches
// its due time, dated then, and the chat's counts follow.
func TestAssistantReplies(t *testing.T) {
	for _, v := range versions {
		t.Run(v.String(), func(t *testing.T) {
			s, clk := newClocked(v)
			s.SetAssistant(30 * time.Second)
			chat := mustChat(t, s, DemoKey, budgetChat)
			question := "How much did I spend on coffee in the first two weeks of January, and is that more than December?"
			wantStatus(t, sendMessage(t, s, DemoKey, chat.ID, `{"content":"`+question+`","model":"gpt-4.1-mini"}`), http.StatusCreated)
			sent := iso8601(fixedNow)

			listed := func() chatSummaryJSON {
				t.Helper()
				for _, c := range decode[chatList](t, get(t, s, "/api/v1/chats", DemoKey)).Chats {
					if c.ID == chat.ID {
						return c
					}
				}
				t.Fatal("chat not listed")
				return chatSummaryJSON{}
			}
			oldest := iso8601(s.keys[DemoKey].user.chatByID[chat.ID].messages[0].createdAt)
			if got := listed(); got.MessageCount != 7 || *got.FirstMessageAt != oldest || got.UpdatedAt != sent {
				t.Errorf("just sent: got %+v, want 7 messages, last_message_at the oldest's (%s)", got, oldest)
			}

			clk.advance(29 * time.Second)
			if got := listed(); got.MessageCount != 7 {
				t.Errorf("after 29s: got %d messages, want 7 (not due yet)", got.MessageCount)
			}

			clk.advance(time.Second) // due: exactly 30s
			due := iso8601(fixedNow.Add(30 * time.Second))
			if got := listed(); got.MessageCount != 8 || *got.FirstMessageAt != oldest || got.UpdatedAt != due {
				t.Errorf("after 30s: got %+v, want 8 messages, updated %s, last_message_at still the oldest's", got, due)
			}

			clk.advance(time.Hour) // the reply is dated when it was due, not when read
			shown := decode[chatJSON](t, get(t, s, "/api/v1/chats/"+chat.ID, DemoKey))
			reply := shown.Messages[len(shown.Messages)-1]
			wantContent := `You asked: "` + question[:60] + `". Here is what I found…`
			if reply.Type != "assistant_message" || reply.Role != "assistant" || reply.Content != wantContent ||
				reply.Model == nil || *reply.Model != "gpt-4.1-mini" || reply.CreatedAt != due {
				t.Errorf("reply: got %+v, want the assistant's answer with the question's model at %s", reply, due)
			}
			if got := mustChat(t, s, DemoKey, budgetChat).MessageCount; got != 8 {
				t.Errorf("Chats(): got %d messages, want 8 (one reply)", got)
			}
		})
	}
}

// Replies wait for any request that reads or writes the user's chats, Chats()
// included, and keep messages oldest first whatever the order of reading.
func TestAssistantRepliesOrderAndVariety(t *testing.T) {
	s, clk := newClocked(Today)
	s.SetAssistant(10 * time.Second)
	chat := mustChat(t, s, OtherFamilyKey, "Empty savings chat")
	for i, q := range []string{"one", "two", "three"} {
		wantStatus(t, sendMessage(t, s, OtherFamilyKey, chat.ID, `{"content":"`+q+`"}`), http.StatusCreated)
		if i < 2 {
			clk.advance(4 * time.Second)
		}
	}
	// Sent at +0, +4, +8: replies due at +10, +14, +18.
	clk.advance(10 * time.Second) // now +18
	if got := mustChat(t, s, OtherFamilyKey, "Empty savings chat").MessageCount; got != 6 {
		t.Fatalf("messages: got %d, want 6", got)
	}
	ch := s.keys[OtherFamilyKey].user.chatByID[chat.ID]
	var order []string
	for _, m := range ch.messages {
		order = append(order, m.createdAt.Sub(fixedNow).String())
	}
	if got, want := strings.Join(order, " "), "0s 4s 8s 10s 14s 18s"; got != want {
		t.Errorf("message times: got %s, want %s", got, want)
	}
	// Every third reply calls a function.
	var calls []int
	for _, m := range ch.messages {
		if m.assistant {
			calls = append(calls, len(m.toolCalls))
		}
	}
	if len(calls) != 3 || calls[0] != 0 || calls[1] != 0 || calls[2] != 1 {
		t.Errorf("tool calls per reply: got %v, want [0 0 1]", calls)
	}
	shown := decode[chatJSON](t, get(t, s, "/api/v1/chats/"+chat.ID, OtherFamilyKey))
	if last := shown.Messages[5]; len(last.ToolCalls) != 1 || last.ToolCalls[0].FunctionName != "get_accounts" {
		t.Errorf("third reply: got %+v, want one get_accounts call", last)
	}
}

func TestAssistantFirstMessageOfCreatedChat(t *testing.T) {
	for _, v := range versions {
		t.Run(v.String(), func(t *testing.T) {
			s, clk := newClocked(v)
			s.SetAssistant(time.Minute)
			rec := serve(t, s, http.MethodPost, "/api/v1/chats", DemoKey,
				withBody("application/json", `{"title":"Coffee","message":"How much on coffee?"}`))
			created := decode[chatJSON](t, rec)
			clk.advance(time.Minute)
			shown := decode[chatJSON](t, get(t, s, "/api/v1/chats/"+created.ID, DemoKey))
			if len(shown.Messages) != 2 || shown.Messages[1].Type != "assistant_message" || *shown.Messages[1].Model != defaultModel {
				t.Errorf("messages: got %+v, want the question and its answer with the default model", shown.Messages)
			}
			// Today's update answer still shows no messages.
			rec = serve(t, s, http.MethodPatch, "/api/v1/chats/"+created.ID, DemoKey, withBody("application/json", `{"title":"Coffee!"}`))
			wantWriteAnswer(t, v, rec, 2)
		})
	}
}

func TestAssistantNeverAnswersByDefault(t *testing.T) {
	s, clk := newClocked(Today)
	chat := mustChat(t, s, DemoKey, budgetChat)
	wantStatus(t, sendMessage(t, s, DemoKey, chat.ID, `{"content":"Hello?"}`), http.StatusCreated)
	clk.advance(1000 * time.Hour)
	if got := mustChat(t, s, DemoKey, budgetChat).MessageCount; got != 7 {
		t.Errorf("messages: got %d, want 7 (no reply)", got)
	}
	// Turning the assistant on later does not answer earlier messages.
	s.SetAssistant(0)
	if got := decode[chatList](t, get(t, s, "/api/v1/chats", DemoKey)).Chats[0].MessageCount; got != 7 {
		t.Errorf("messages: got %d, want 7", got)
	}
	// A zero delay answers at once, on the next read.
	wantStatus(t, sendMessage(t, s, DemoKey, chat.ID, `{"content":"Now?"}`), http.StatusCreated)
	if got := mustChat(t, s, DemoKey, budgetChat).MessageCount; got != 9 {
		t.Errorf("messages: got %d, want 9", got)
	}
}

func TestAssistantReplyToDeletedChat(t *testing.T) {
	s, clk := newClocked(Today)
	s.SetAssistant(time.Second)
	chat := mustChat(t, s, DemoKey, budgetChat)
	wantStatus(t, sendMessage(t, s, DemoKey, chat.ID, `{"content":"Hello?"}`), http.StatusCreated)
	wantStatus(t, serve(t, s, http.MethodDelete, "/api/v1/chats/"+chat.ID, DemoKey), http.StatusNoContent)
	clk.advance(time.Minute)
	if got := len(s.Chats(DemoKey)); got != 3 {
		t.Errorf("chats: got %d, want 3", got)
	}
	if got := len(s.keys[DemoKey].user.pending); got != 0 {
		t.Errorf("pending replies: got %d, want none left", got)
	}
}

func TestFirstRunes(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"hello", 3, "hel"},
		{"hi", 60, "hi"},
		{"héllo", 2, "hé"},
		{"", 5, ""},
		{"abc", 0, ""},
	}
	for _, tt := range tests {
		if got := firstRunes(tt.in, tt.n); got != tt.want {
			t.Errorf("firstRunes(%q, %d): got %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
