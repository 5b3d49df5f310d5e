package restclienttest

import (
	"encoding/json"
	"sort"
	"time"
)

// The upstream answers a user message asynchronously: a background job asks
// the AI provider and appends the assistant's message to the chat later. The
// fake has no goroutine and no timer for that: a sent message books its
// reply for a due time on the fake's clock, and every request that reads or
// writes the user's chats first appends the replies due by its clock's now
// (deliverReplies). A test moves the clock with SetClock; nothing sleeps.

// replyPrefixRunes is how much of the question a reply quotes.
const replyPrefixRunes = 60

// SetAssistant makes the assistant answer each user message sent through the
// API (POST /chats/{id}/messages, and a createChat first message) after
// delay, on the fake's clock; a negative delay (the default) means it never
// answers. The delay is read when a message is sent: changing it does not
// move replies already booked.
func (s *Server) SetAssistant(delay time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.assistantDelay = delay
}

// deliverReplies appends to u's chats every booked reply due at or before
// now, earliest first; replies to deleted chats are dropped. s.mu is held.
func (s *Server) deliverReplies(u *user, now time.Time) {
	if len(u.pending) == 0 {
		return
	}
	sort.SliceStable(u.pending, func(i, j int) bool { return u.pending[i].due.Before(u.pending[j].due) })
	var later []pendingReply
	for _, p := range u.pending {
		switch {
		case p.due.After(now):
			later = append(later, p)
		case u.chatByID[p.chat.id] == p.chat:
			s.reply(p)
		}
	}
	u.pending = later
}

// reply writes the assistant's answer to p's question, created at the due
// time with the question's model. Every third reply (counted over the
// server) calls a function first, for variety.
func (s *Server) reply(p pendingReply) {
	s.replies++
	m := &message{
		id:        s.mint("message"),
		assistant: true,
		content:   `You asked: "` + firstRunes(p.question.content, replyPrefixRunes) + `". Here is what I found…`,
		model:     p.question.model,
		createdAt: p.due,
		updatedAt: p.due,
	}
	if s.replies%3 == 0 {
		m.toolCalls = []toolCall{{
			id:           s.mint("tool_call"),
			functionName: accounts.name,
			arguments:    json.RawMessage(accounts.args),
			result:       json.RawMessage(accounts.result),
			createdAt:    p.due.Add(-time.Second), // the function runs before the answer is written
		}}
	}
	p.chat.insert(m)
	if p.due.After(p.chat.updatedAt) {
		p.chat.updatedAt = p.due
	}
}

// firstRunes returns the first n characters of s.
func firstRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}
