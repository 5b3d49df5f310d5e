package graph

import (
	"context"
	"errors"
	"time"

	"suregql/graph/model"
	"suregql/planner"
	"suregql/restclient"
)

// settleTimeout bounds the one read that settles a write whose answer was
// lost. It runs even when the operation's own deadline has passed (that
// deadline is often why the answer was lost), but never when the client
// has gone away: nobody would read the answer.
const settleTimeout = 5 * time.Second

// clockSkew is how much earlier than the request the upstream's clock may
// date a chat it created because of it.
const clockSkew = 5 * time.Second

// createChat sends a chat creation. When the upstream's answer is lost the
// chat may exist: one read of the newest chats (the list is newest first)
// settles it when it holds a chat with that title created since the
// request was sent.
func createChat(ctx context.Context, l *planner.Planner, req restclient.CreateChatRequest) (chat *model.Chat, confirmed bool, err error) {
	sent := time.Now()
	created, err := l.Client().CreateChat(ctx, req)
	return afterWrite(ctx, l, created, err, "created", func(ctx context.Context) (*model.Chat, error) {
		page, err := l.Client().ListChats(ctx, 1)
		if err != nil {
			return nil, err
		}
		for i := range page.Chats {
			if c := &page.Chats[i]; c.Title == req.Title && !c.CreatedAt.Before(sent.Add(-clockSkew)) {
				return chatFromSummary(c), nil
			}
		}
		return nil, nil
	})
}

// updateChat renames a chat. When the upstream's answer is lost, one read
// of the chat settles it if the chat carries the new title.
func updateChat(ctx context.Context, l *planner.Planner, id, title string) (chat *model.Chat, confirmed bool, err error) {
	updated, err := l.Client().UpdateChat(ctx, id, title)
	return afterWrite(ctx, l, updated, err, "renamed", func(ctx context.Context) (*model.Chat, error) {
		current, err := l.Client().GetChat(ctx, id, 1)
		if err != nil || current.Title != title {
			return nil, err
		}
		return chatFromShow(current), nil
	})
}

// afterWrite returns what a chat write that answered (chat, err) means for
// the caller. When the answer was lost after the request was sent
// (restclient.OutcomeUnknown), find looks for the write's effect with one
// read: found, the write is answered as done (confirmed); otherwise the
// error is an *outcomeUnknownError, never a plain "unavailable" that would
// invite a retry and a duplicate.
func afterWrite(ctx context.Context, l *planner.Planner, chat *restclient.Chat, err error, action string,
	find func(context.Context) (*model.Chat, error),
) (*model.Chat, bool, error) {
	l.ChatsWritten(err)
	if err == nil {
		return chatFromShow(chat), false, nil
	}
	if !restclient.OutcomeUnknown(err) || errors.Is(ctx.Err(), context.Canceled) {
		return nil, false, err
	}
	unknown := &outcomeUnknownError{action: action, cause: err}
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	found, ferr := find(readCtx)
	if ferr != nil {
		return nil, false, unknown
	}
	unknown.checked = true
	if found == nil {
		return nil, false, unknown
	}
	return found, true, nil
}
