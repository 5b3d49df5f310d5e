package restclienttest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// defaultModel is the model the upstream records on a first message created
// without one.
const defaultModel = "gpt-4.1"

// chatSummaryJSON is an element of the upstream's chat list. Sure names
// the time of the chat's oldest message last_message_at (its view renders
// chat.messages.ordered.first, ordered oldest first: UPSTREAM.md).
type chatSummaryJSON struct {
	ID             string  `json:"id"`
	Title          string  `json:"title"`
	FirstMessageAt *string `json:"last_message_at"`
	MessageCount   int     `json:"message_count"`
	Error          *string `json:"error"`
	CreatedAt      string  `json:"created_at"`
	UpdatedAt      string  `json:"updated_at"`
}

// chatJSON is the upstream's Chat (show, create, update): one page of its
// messages, oldest first, with the pagination of the messages. Today's
// create and update render no page at all: "messages" is [] and there is no
// "pagination" (the view is rendered without a pagy).
type chatJSON struct {
	ID         string          `json:"id"`
	Title      string          `json:"title"`
	Error      *string         `json:"error"`
	CreatedAt  string          `json:"created_at"`
	UpdatedAt  string          `json:"updated_at"`
	Messages   []messageJSON   `json:"messages"`
	Pagination *chatPagination `json:"pagination,omitempty"`
}

// messageJSON is the upstream's Message: "model" only on assistant messages,
// "tool_calls" only on assistant messages that made some.
type messageJSON struct {
	ID        string         `json:"id"`
	Type      string         `json:"type"`
	Role      string         `json:"role"`
	Content   string         `json:"content"`
	CreatedAt string         `json:"created_at"`
	UpdatedAt string         `json:"updated_at"`
	Model     *string        `json:"model,omitempty"`
	ToolCalls []toolCallJSON `json:"tool_calls,omitempty"`
}

type toolCallJSON struct {
	ID                string          `json:"id"`
	FunctionName      string          `json:"function_name"`
	FunctionArguments json.RawMessage `json:"function_arguments"`
	FunctionResult    json.RawMessage `json:"function_result"` // nil renders as null
	CreatedAt         string          `json:"created_at"`
}

func (ch *chat) summaryJSON() chatSummaryJSON {
	out := chatSummaryJSON{
		ID:           ch.id,
		Title:        ch.title,
		MessageCount: len(ch.messages),
		Error:        optional(ch.errMsg),
		CreatedAt:    iso8601(ch.createdAt),
		UpdatedAt:    iso8601(ch.updatedAt),
	}
	if len(ch.messages) > 0 {
		first := iso8601(ch.messages[0].createdAt)
		out.FirstMessageAt = &first
	}
	return out
}

// toJSON renders the chat with the requested page of its messages, as
// release line v pages them.
func (ch *chat) toJSON(v Version, page int) chatJSON {
	p, from, to := paginate(len(ch.messages), page, messagesPerPage(v))
	out := ch.withoutMessages()
	for _, m := range ch.messages[from:to] {
		out.Messages = append(out.Messages, m.toJSON())
	}
	out.Pagination = p.forChats(v)
	return out
}

// withoutMessages renders the chat as Today's create and update do.
func (ch *chat) withoutMessages() chatJSON {
	return chatJSON{
		ID:        ch.id,
		Title:     ch.title,
		Error:     optional(ch.errMsg),
		CreatedAt: iso8601(ch.createdAt),
		UpdatedAt: iso8601(ch.updatedAt),
		Messages:  []messageJSON{},
	}
}

// writeAnswer renders the chat as create and update answer in the server's
// release line.
func (s *Server) writeAnswer(ch *chat, page int) chatJSON {
	if s.version == Legacy {
		return ch.toJSON(s.version, page)
	}
	return ch.withoutMessages()
}

func (m *message) toJSON() messageJSON {
	out := messageJSON{
		ID:        m.id,
		Type:      "user_message",
		Role:      "user",
		Content:   m.content,
		CreatedAt: iso8601(m.createdAt),
		UpdatedAt: iso8601(m.updatedAt),
	}
	if !m.assistant {
		return out
	}
	out.Type, out.Role = "assistant_message", "assistant"
	model := m.model
	out.Model = &model
	for _, tc := range m.toolCalls {
		out.ToolCalls = append(out.ToolCalls, toolCallJSON{
			ID:                tc.id,
			FunctionName:      tc.functionName,
			FunctionArguments: tc.arguments,
			FunctionResult:    tc.result,
			CreatedAt:         iso8601(tc.createdAt),
		})
	}
	return out
}

// chatNotFound is the upstream's 404 for chats: no "message" member.
func chatNotFound() response {
	return jsonResponse(http.StatusNotFound, errorBody{Error: "Chat not found"})
}

// blankTitle is the upstream's validation failure for a blank chat title.
func blankTitle(action string) response {
	return jsonResponse(http.StatusUnprocessableEntity, errorBody{
		Error:   "Failed to " + action + " chat",
		Details: []string{"Title can't be blank"},
	})
}

// findChat looks the call's {id} up among the user's chats.
func (c *call) findChat() *chat {
	id, ok := castUUID(c.id)
	if !ok {
		return nil
	}
	return c.key.user.load().chatByID[id]
}

// listChats is GET /api/v1/chats: newest first, 20 a page whatever per_page
// says (the reported per_page is 20 in Legacy, null Today).
func (s *Server) listChats(c *call) response {
	chats := c.key.user.load().newestFirst()
	page, from, to := paginate(len(chats), pageParam(c.query["page"]), chatsPerPage)
	out := make([]chatSummaryJSON, 0, to-from)
	for _, ch := range chats[from:to] {
		out = append(out, ch.summaryJSON())
	}
	return jsonResponse(http.StatusOK, struct {
		Chats      []chatSummaryJSON `json:"chats"`
		Pagination *chatPagination   `json:"pagination"`
	}{out, page.forChats(s.version)})
}

// showChat is GET /api/v1/chats/{id}: messages oldest first, 50 a page in
// Legacy, 20 Today.
func (s *Server) showChat(c *call) response {
	ch := c.findChat()
	if ch == nil {
		return chatNotFound()
	}
	return jsonResponse(http.StatusOK, ch.toJSON(s.version, pageParam(c.query["page"])))
}

// createChat is POST /api/v1/chats. The title is required; a non-blank
// message becomes the first user message, and the assistant's reply comes
// later (SetAssistant).
func (s *Server) createChat(c *call) response {
	p, err := c.query.withBody(c.req.Header.Get("Content-Type"), c.body)
	if err != nil {
		return badRequest()
	}
	if !p.present("title") {
		return blankTitle("create")
	}
	u := c.key.user.load()
	ch := &chat{id: s.mint("chat"), title: p["title"], createdAt: c.now, updatedAt: c.now}
	u.addChat(ch)
	if p.present("message") {
		s.ask(u, ch, p["message"], p["model"], c.now)
	}
	return jsonResponse(http.StatusCreated, s.writeAnswer(ch, pageParam(p["page"])))
}

// updateChat is PATCH (or PUT) /api/v1/chats/{id}. Only a title that is sent
// is validated: a body without one (or one the server cannot read, e.g. JSON
// without its Content-Type) changes nothing and answers 200. updated_at moves
// only when the title really changes, as with ActiveRecord's update.
func (s *Server) updateChat(c *call) response {
	// Rails parses the body as soon as the controller reads params, before it
	// looks the chat up.
	p, err := c.query.withBody(c.req.Header.Get("Content-Type"), c.body)
	if err != nil {
		return badRequest()
	}
	ch := c.findChat()
	if ch == nil {
		return chatNotFound()
	}
	if p.has("title") {
		if blank(p["title"]) {
			return blankTitle("update")
		}
		if p["title"] != ch.title {
			ch.title = p["title"]
			ch.updatedAt = c.now
		}
	}
	return jsonResponse(http.StatusOK, s.writeAnswer(ch, pageParam(p["page"])))
}

// deleteChat is DELETE /api/v1/chats/{id}: 204 without a body (Rails' `head
// :no_content`); the chat goes with its messages and any reply still due.
func (s *Server) deleteChat(c *call) response {
	ch := c.findChat()
	if ch == nil {
		return chatNotFound()
	}
	c.key.user.load().removeChat(ch)
	return response{status: http.StatusNoContent, header: http.Header{}}
}

// mint returns a fresh deterministic id for a record created at runtime.
func (s *Server) mint(kind string) string {
	s.minted++
	return seedID(fmt.Sprintf("runtime/%s/%d", kind, s.minted))
}
