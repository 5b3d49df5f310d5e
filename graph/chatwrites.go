package graph

import (
	"context"
	"time"

	"suregql/graph/loader"
	"suregql/graph/model"
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

// createChat sends a chat creation. When the upstream's answer is lost,
// the chat may exist: one read of the newest chats (where a new chat is
// first, the list being newest first) settles it when it holds a chat with
// that title created since the request was sent. confirmed reports that
// the chat was found that way; otherwise the error is an
// *outcomeUnknownError, never a plain "unavailable" that invites a retry.
func createChat(ctx context.Context, l *loader.Loaders, req restclient.CreateChatRequest) (chat *model.Chat, confirmed bool, err error) {
	sent := time.Now()
	created, err := l.Client().CreateChat(ctx, req)
	l.ChatsWritten(err)
	if err == nil {
		return chatFromShow(created), false, nil
	}
	if !restclient.OutcomeUnknown(err) || ctx.Err() == context.Canceled {
		return nil, false, err
	}
	unknown := &outcomeUnknownError{action: "created", cause: err}
	readCtx, cancel := settleContext(ctx)
	defer cancel()
	page, rerr := l.Client().ListChats(readCtx, 1)
	if rerr != nil {
		return nil, false, unknown
	}
	unknown.checked = true
	for i := range page.Chats {
		c := &page.Chats[i]
		if c.Title == req.Title && !c.CreatedAt.Before(sent.Add(-clockSkew)) {
			return chatFromSummary(c), true, nil
		}
	}
	return nil, false, unknown
}

// updateChat renames a chat. When the upstream's answer is lost, one read
// of the chat settles it if the chat carries the new title.
func updateChat(ctx context.Context, l *loader.Loaders, id, title string) (chat *model.Chat, confirmed bool, err error) {
	updated, err := l.Client().UpdateChat(ctx, id, title)
	l.ChatsWritten(err)
	if err == nil {
		return chatFromShow(updated), false, nil
	}
	if !restclient.OutcomeUnknown(err) || ctx.Err() == context.Canceled {
		return nil, false, err
	}
	unknown := &outcomeUnknownError{action: "renamed", cause: err}
	readCtx, cancel := settleContext(ctx)
	defer cancel()
	current, rerr := l.Client().GetChat(readCtx, id, 1)
	if rerr != nil {
		return nil, false, unknown
	}
	unknown.checked = true
	if current.Title == title {
		return chatFromShow(current), true, nil
	}
	return nil, false, unknown
}

func settleContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
}
