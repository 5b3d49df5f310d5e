package facade_test

import (
	"testing"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// chatTimes is a chat of the list as the tests of its message times read
// it.
type chatTimes struct {
	Title          string
	MessageCount   int
	FirstMessageAt *string
	LastMessageAt  *string
	Oldest, Newest struct{ Nodes []struct{ CreatedAt string } }
}

// Issue 25: Sure's list sends the time of a chat's oldest message (as
// last_message_at). lastMessageAt is the newest message's time, as its
// description says; firstMessageAt is what the list sends. Each agrees
// with the chat's messages, for every chat (none, one, many messages).
func TestChats_MessageTimesSayWhatTheyClaim(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var got struct{ Chats struct{ Nodes []chatTimes } }
	e.ok(restclienttest.DemoKey, `{ chats(first: 20) { nodes { title messageCount firstMessageAt lastMessageAt
		oldest: messages(first: 1) { nodes { createdAt } } newest: messages(last: 1) { nodes { createdAt } } } } }`, nil, &got)
	if len(got.Chats.Nodes) == 0 {
		t.Fatal("no chats")
	}
	for _, c := range got.Chats.Nodes {
		if c.MessageCount == 0 {
			if c.FirstMessageAt != nil || c.LastMessageAt != nil {
				t.Errorf("%q, no message: firstMessageAt %v, lastMessageAt %v; want null", c.Title, c.FirstMessageAt, c.LastMessageAt)
			}
			continue
		}
		oldest, newest := c.Oldest.Nodes[0].CreatedAt, c.Newest.Nodes[0].CreatedAt
		if c.FirstMessageAt == nil || *c.FirstMessageAt != oldest {
			t.Errorf("%q: firstMessageAt %v, want the oldest message's %s", c.Title, deref(c.FirstMessageAt), oldest)
		}
		if c.LastMessageAt == nil || *c.LastMessageAt != newest {
			t.Errorf("%q: lastMessageAt %v, want the newest message's %s", c.Title, deref(c.LastMessageAt), newest)
		}
	}
}

// What each costs in a list: firstMessageAt and messageCount come with
// the list (one call); lastMessageAt is free for a chat of no or one
// message, else one call per chat (its last page), the same call that
// messages(last:) of that chat reads.
func TestChats_MessageTimesCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.CacheTTL = facade.CacheOff }))
	var got struct{ Chats struct{ Nodes []chatTimes } }
	wantCalls(t, e.ok(restclienttest.OtherFamilyKey, `{ chats(first: 20) { nodes { title messageCount firstMessageAt } } }`, nil, &got), 1)
	many := 0
	for _, c := range got.Chats.Nodes {
		if c.MessageCount > 1 {
			many++
		}
	}
	if many == 0 || many == len(got.Chats.Nodes) {
		t.Fatalf("the demo's chats: %d of %d with more than one message, want some and not all", many, len(got.Chats.Nodes))
	}
	wantCalls(t, e.ok(restclienttest.OtherFamilyKey, `{ chats(first: 20) { nodes { lastMessageAt } } }`, nil, nil), 1+many)
	wantCalls(t, e.ok(restclienttest.OtherFamilyKey, `{ chats(first: 20) { nodes { lastMessageAt messages(last: 2) { nodes { id } } } } }`, nil, nil), 1+many)
}

func deref(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// A chat read by id: firstMessageAt from its first page, lastMessageAt
// from its last, one call each when the chat's messages span pages, and
// each the chat's own messages' times.
func TestChat_MessageTimesByID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var list struct {
		Chats struct {
			Nodes []struct {
				ID           string
				MessageCount int
			}
		}
	}
	e.ok(restclienttest.DemoKey, `{ chats(first: 20) { nodes { id messageCount } } }`, nil, &list)
	long := ""
	for _, c := range list.Chats.Nodes {
		if c.MessageCount > 50 {
			long = c.ID
		}
	}
	if long == "" {
		t.Fatal("the demo has no chat of more than one page of messages")
	}
	vars := map[string]any{"id": long}
	var got struct{ Chat chatTimes }
	e.ok(restclienttest.DemoKey, `query($id: ID!) { chat(id: $id) { oldest: messages(first: 1) { nodes { createdAt } } newest: messages(last: 1) { nodes { createdAt } } } }`, vars, &got)
	for _, tc := range []struct {
		query string
		calls int
	}{
		{`query($id: ID!) { chat(id: $id) { firstMessageAt } }`, 1},
		{`query($id: ID!) { chat(id: $id) { lastMessageAt } }`, 1},
		{`query($id: ID!) { chat(id: $id) { firstMessageAt lastMessageAt } }`, 2},
	} {
		var c struct{ Chat chatTimes }
		wantCalls(t, e.ok(restclienttest.DemoKey, tc.query, vars, &c), tc.calls)
		if c.Chat.FirstMessageAt != nil && *c.Chat.FirstMessageAt != got.Chat.Oldest.Nodes[0].CreatedAt {
			t.Errorf("%s: firstMessageAt %s, want the oldest message's %s", tc.query, *c.Chat.FirstMessageAt, got.Chat.Oldest.Nodes[0].CreatedAt)
		}
		if c.Chat.LastMessageAt != nil && *c.Chat.LastMessageAt != got.Chat.Newest.Nodes[0].CreatedAt {
			t.Errorf("%s: lastMessageAt %s, want the newest message's %s", tc.query, *c.Chat.LastMessageAt, got.Chat.Newest.Nodes[0].CreatedAt)
		}
		if c.Chat.FirstMessageAt == nil && c.Chat.LastMessageAt == nil {
			t.Errorf("%s: neither time answered", tc.query)
		}
	}
}
