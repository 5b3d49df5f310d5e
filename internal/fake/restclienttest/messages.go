package restclienttest

import (
	"net/http"
	"time"
)

// sentMessageJSON is api/v1/messages/show.json.jbuilder for the user message
// just sent: the message, its chat_id, and a note that the assistant's
// answer is on its way.
type sentMessageJSON struct {
	ID                string `json:"id"`
	ChatID            string `json:"chat_id"`
	Type              string `json:"type"`
	Role              string `json:"role"`
	Content           string `json:"content"`
	CreatedAt         string `json:"created_at"`
	UpdatedAt         string `json:"updated_at"`
	AIResponseStatus  string `json:"ai_response_status"`
	AIResponseMessage string `json:"ai_response_message"`
}

// createMessage is POST /api/v1/chats/{chat_id}/messages, body {"content",
// "model"}: 201 with the user message; the assistant's reply is appended
// later (SetAssistant).
func (s *Server) createMessage(c *call) response {
	// Rails parses the body as soon as set_chat reads params[:chat_id].
	p, err := c.query.withBody(c.req.Header.Get("Content-Type"), c.body)
	if err != nil {
		return badRequest()
	}
	ch := c.findChat()
	if ch == nil {
		return chatNotFound()
	}
	if !p.present("content") {
		return jsonResponse(http.StatusUnprocessableEntity, errorBody{
			Error:   "Failed to create message",
			Details: []string{"Content can't be blank"},
		})
	}
	m := s.ask(c.key.user.load(), ch, p["content"], p["model"], c.now)
	return jsonResponse(http.StatusCreated, sentMessageJSON{
		ID:                m.id,
		ChatID:            ch.id,
		Type:              "user_message",
		Role:              "user",
		Content:           m.content,
		CreatedAt:         iso8601(m.createdAt),
		UpdatedAt:         iso8601(m.updatedAt),
		AIResponseStatus:  "pending",
		AIResponseMessage: "AI response is being generated",
	})
}

// retryMessage is POST /api/v1/chats/{chat_id}/messages/retry. It is meant
// to answer 202, but the empty assistant message it creates fails Message's
// content validation, so whenever it would retry (the chat's last message is
// the assistant's) the upstream answers 500 (UPSTREAM.md: broken at v0.7.x;
// Sure's source shows the same validation already at v0.6.0). Otherwise the
// controller refuses with 422 before creating anything.
func (s *Server) retryMessage(c *call) response {
	if _, err := c.query.withBody(c.req.Header.Get("Content-Type"), c.body); err != nil {
		return badRequest()
	}
	ch := c.findChat()
	if ch == nil {
		return chatNotFound()
	}
	if n := len(ch.messages); n == 0 || !ch.messages[n-1].assistant {
		return jsonResponse(http.StatusUnprocessableEntity, errorBody{Error: "No assistant message to retry"})
	}
	return internalServerError()
}

// ask adds the user's message to ch at now (model blank: the default
// model) and, when the assistant answers (SetAssistant), books its reply.
func (s *Server) ask(u *user, ch *chat, content, model string, now time.Time) *message {
	if blank(model) {
		model = defaultModel
	}
	m := &message{id: s.mint("message"), content: content, model: model, createdAt: now, updatedAt: now}
	ch.insert(m)
	ch.updatedAt = now
	ch.errMsg = "" // Chat#ask_assistant_later clears the last error
	if s.assistantDelay >= 0 {
		u.pending = append(u.pending, pendingReply{chat: ch, question: m, due: now.Add(s.assistantDelay)})
	}
	return m
}

// insert adds m to the chat's messages, keeping them oldest first (after
// those created at the same time), even when the clock was set back.
func (ch *chat) insert(m *message) {
	i := len(ch.messages)
	for i > 0 && ch.messages[i-1].createdAt.After(m.createdAt) {
		i--
	}
	ch.messages = append(ch.messages, nil)
	copy(ch.messages[i+1:], ch.messages[i:])
	ch.messages[i] = m
}
