package planner

import (
	"context"
	"errors"
	"fmt"
	"time"

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

// Written is a chat write that went through: the upstream's answer, or,
// when that answer was lost, the chat one read found (ConfirmedByRead).
type Written struct {
	Chat            *restclient.Chat        // the answer, or what the read of the chat found
	Listed          *restclient.ChatSummary // what the read of the chat list found (a create)
	ConfirmedByRead bool
}

// OutcomeUnknownError is a write whose answer was lost after it was sent:
// it may have been applied. It is never "try again", which would invite a
// duplicate.
type OutcomeUnknownError struct {
	Action  string // "created", "renamed"
	Checked bool   // one read looked for the write's effect and did not find it
	cause   error
}

func (e *OutcomeUnknownError) Error() string {
	msg := fmt.Sprintf("the Sure server did not answer the write, which may still have been applied: the chat may have been %s", e.Action)
	if e.Checked {
		msg += "; it was not visible when checked right after"
	}
	return msg + ". Check the chats before sending it again, or it may be applied twice"
}

func (e *OutcomeUnknownError) Unwrap() error { return e.cause }

// CreateChat sends a chat creation, once. When the upstream's answer is
// lost the chat may exist: one read of the newest chats (the list is
// newest first) settles it when it holds a chat with that title created
// since the request was sent.
func (l *Planner) CreateChat(ctx context.Context, req restclient.CreateChatRequest) (Written, error) {
	sent := time.Now()
	created, err := l.client.CreateChat(ctx, req)
	return l.afterWrite(ctx, created, err, "created", func(ctx context.Context) (Written, error) {
		page, err := l.client.ListChats(ctx, 1)
		if err != nil {
			return Written{}, err
		}
		for i := range page.Chats {
			if c := &page.Chats[i]; c.Title == req.Title && !c.CreatedAt.Before(sent.Add(-clockSkew)) {
				return Written{Listed: c}, nil
			}
		}
		return Written{}, nil
	})
}

// UpdateChat renames a chat, once. When the upstream's answer is lost, one
// read of the chat settles it if the chat carries the new title.
func (l *Planner) UpdateChat(ctx context.Context, id, title string) (Written, error) {
	updated, err := l.client.UpdateChat(ctx, id, title)
	return l.afterWrite(ctx, updated, err, "renamed", func(ctx context.Context) (Written, error) {
		current, err := l.client.GetChat(ctx, id, 1)
		if err != nil || current.Title != title {
			return Written{}, err
		}
		return Written{Chat: current}, nil
	})
}

// afterWrite returns what a chat write that answered (chat, err) means for
// the caller. When the answer was lost after the request was sent
// (restclient.OutcomeUnknown), find looks for the write's effect with one
// read: found, the write is answered as done (ConfirmedByRead); otherwise
// the error is an *OutcomeUnknownError.
func (l *Planner) afterWrite(ctx context.Context, chat *restclient.Chat, err error, action string,
	find func(context.Context) (Written, error),
) (Written, error) {
	l.chatsWritten(err)
	if err == nil {
		if chat != nil {
			l.remember(KindChat, chat.ID)
		}
		return Written{Chat: chat}, nil
	}
	if !restclient.OutcomeUnknown(err) || errors.Is(ctx.Err(), context.Canceled) {
		return Written{}, err
	}
	unknown := &OutcomeUnknownError{Action: action, cause: err}
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	found, ferr := find(readCtx)
	if ferr != nil {
		return Written{}, unknown
	}
	unknown.Checked = true
	if found.Chat == nil && found.Listed == nil {
		return Written{}, unknown
	}
	found.ConfirmedByRead = true
	return found, nil
}
