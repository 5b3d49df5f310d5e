package planner

import (
	"context"
	"time"

	"github.com/suregql/suregql/internal/planning/paging"
	"github.com/suregql/suregql/restclient"
)

// Default windows of the chat lists when neither first nor last is given.
const (
	DefaultChatPage    = 20
	DefaultMessagePage = 25
)

const chatListName = "chats"

// ParseChats checks the chat list's arguments locally.
func ParseChats(args paging.Args) (paging.Request, error) {
	return paging.Parse(chatListName, args, DefaultChatPage)
}

// Chats answers a window of the chat list (newest first) with the fewest
// upstream pages. The server ignores per_page on this list: pages hold
// restclient.ChatsPerPage, and Load trusts the size each page reports.
func (l *Planner) Chats(ctx context.Context, r paging.Request) (paging.Result[*restclient.ChatSummary], error) {
	return paging.Load(ctx, r, paging.Source[*restclient.ChatSummary]{
		FixedPageSize: restclient.ChatsPerPage,
		Reserve:       l.budget.Reserve,
		Order:         chatOrder,
		Fetch: func(ctx context.Context, page, _ int) (paging.Page[*restclient.ChatSummary], error) {
			p, err := l.client.ListChats(ctx, page)
			if err != nil {
				return paging.Page[*restclient.ChatSummary]{}, err
			}
			items := make([]*restclient.ChatSummary, len(p.Chats))
			for i := range p.Chats {
				items[i] = &p.Chats[i]
				l.remember(KindChat, p.Chats[i].ID)
			}
			// per_page is null since v0.6.6: the page shows its size.
			return paging.Page[*restclient.ChatSummary]{Items: items, Page: p.Pagination.Page, PerPage: p.Pagination.Size(len(items)), Total: p.Pagination.TotalCount}, nil
		},
	})
}

// ChatWant says what the selection reads of a chat's messages.
type ChatWant struct {
	// NewestOnly: only the newest messages (messages with last and no
	// before, or lastMessageAt) and never a window from the start.
	NewestOnly bool
	// From is the offset of the first message the selection's windows
	// read, when they all start there (after a cursor, or the last n
	// before one); 0 for a window from the start.
	From int
}

// Chat reads one chat with one call. Its show answer carries one page of
// messages: the first; or when only the newest are wanted, a page past the
// end, which the upstream answers with its last page; or the page holding
// the first message of a window further on (want.From) — so the chat and
// the first page its messages need come in that one call.
func (l *Planner) Chat(ctx context.Context, id string, want ChatWant) (*restclient.Chat, error) {
	page := 1
	switch {
	case want.NewestOnly:
		page = paging.OverflowPage
	case want.From > 0:
		page = want.From/l.messagesPerPage() + 1
	}
	c, err := l.client.GetChat(ctx, id, page)
	if err != nil {
		return nil, notFound(err, "chat", id)
	}
	l.remember(KindChat, c.ID)
	l.learnMessagesPerPage(c.MessagePage(0))
	return c, nil
}

// MessagePage returns the page of messages a chat answer carries, its
// size as the answer shows it or as the server's answers showed it.
func (l *Planner) MessagePage(c *restclient.Chat) restclient.MessagePage {
	return c.MessagePage(l.messagesPerPage())
}

// ChatRef is what an answer told of a chat whose messages are wanted.
type ChatRef struct {
	ID           string
	MessageCount int                     // current: the list's message_count or the show answer's total
	Shown        *restclient.MessagePage // the page a show answer carried, or nil
}

// MessageListName names a chat's message list for cursors.
func MessageListName(chatID string) string { return "chats/" + chatID + "/messages" }

// ParseMessages checks a message list's arguments locally; the count the
// chat's answer carried is current, so windows past the end cost nothing.
func ParseMessages(chat ChatRef, args paging.Args) (paging.Request, error) {
	r, err := paging.Parse(MessageListName(chat.ID), args, DefaultMessagePage)
	return r.WithKnownTotal(chat.MessageCount), err
}

// Messages answers a window of a chat's messages (oldest first), 20 a
// page (50 before Sure v0.6.6: the size answers showed); the page a show
// answer already carried costs nothing.
func (l *Planner) Messages(ctx context.Context, chat ChatRef, r paging.Request) (paging.Result[*restclient.Message], error) {
	if w, empty, known := r.Empty(); empty && known {
		return paging.Result[*restclient.Message]{Window: w}, nil
	}
	return paging.Load(ctx, r, paging.Source[*restclient.Message]{
		FixedPageSize: l.messagesPerPage(),
		Reserve:       l.budget.Reserve,
		Order:         messageOrder,
		Fetch: func(ctx context.Context, page, _ int) (paging.Page[*restclient.Message], error) {
			mp := chat.Shown
			if mp == nil || mp.Page != page {
				c, err := l.client.GetChat(ctx, chat.ID, page)
				if err != nil {
					return paging.Page[*restclient.Message]{}, notFound(err, "chat", chat.ID)
				}
				read := l.MessagePage(c)
				l.learnMessagesPerPage(read)
				mp = &read
			}
			items := make([]*restclient.Message, len(mp.Messages))
			for i := range mp.Messages {
				items[i] = &mp.Messages[i]
			}
			return paging.Page[*restclient.Message]{Items: items, Page: mp.Page, PerPage: mp.PerPage, Total: mp.Total}, nil
		},
	})
}

// FirstMessageAt reads the oldest message of a chat whose answer did not
// hold it: page 1, the call messages(first: n) of the chat makes too. nil
// when the chat has no message.
func (l *Planner) FirstMessageAt(ctx context.Context, chat ChatRef) (*time.Time, error) {
	total := chat.MessageCount
	if chat.Shown != nil {
		total = chat.Shown.Total
	}
	if total == 0 {
		return nil, nil
	}
	c, err := l.client.GetChat(ctx, chat.ID, 1)
	if err != nil {
		return nil, notFound(err, "chat", chat.ID)
	}
	if len(c.Messages) > 0 {
		t := c.Messages[0].CreatedAt
		return &t, nil
	}
	return nil, nil
}

// LastMessageAt reads the newest message of a chat whose answer did not
// hold it: the last page, asked by number (an overflowing page number
// would also answer the last page). nil when the chat has no message.
func (l *Planner) LastMessageAt(ctx context.Context, chat ChatRef) (*time.Time, error) {
	total, perPage := chat.MessageCount, l.messagesPerPage()
	if chat.Shown != nil {
		total, perPage = chat.Shown.Total, chat.Shown.PerPage
	}
	if total == 0 {
		return nil, nil
	}
	lastPage := (total + perPage - 1) / perPage
	c, err := l.client.GetChat(ctx, chat.ID, lastPage)
	if err != nil {
		return nil, notFound(err, "chat", chat.ID)
	}
	if n := len(c.Messages); n > 0 {
		t := c.Messages[n-1].CreatedAt
		return &t, nil
	}
	return nil, nil
}
