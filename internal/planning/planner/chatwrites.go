package planner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/suregql/suregql/internal/planning/paging"
	"github.com/suregql/suregql/restclient"
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
	Action  string // "created", "renamed", "sent", "deleted"
	Object  string // "chat" (when empty), "message", "category"
	Checked bool   // one read looked for the write's effect and did not find it
	cause   error
}

func (e *OutcomeUnknownError) Error() string {
	object, where := e.Object, "chats"
	switch object {
	case "":
		object = "chat"
	case "message":
		where = "chat"
	case "category":
		where = "categories"
	}
	msg := fmt.Sprintf("the Sure server did not answer the write, which may still have been applied: the %s may have been %s", object, e.Action)
	if e.Checked {
		msg += "; it was not visible when checked right after"
	}
	return msg + ". Check the " + where + " before sending it again, or it may be applied twice"
}

func (e *OutcomeUnknownError) Unwrap() error { return e.cause }

// CreateChat sends a chat creation, once. When the upstream's answer is
// lost the chat may exist: one read of the newest chats (the list is
// newest first) settles it when it holds a chat with that title created
// since the request was sent.
func (l *Planner) CreateChat(ctx context.Context, req restclient.CreateChatRequest) (Written, error) {
	sent := time.Now()
	created, err := l.client.CreateChat(ctx, req)
	if strings.TrimSpace(req.Message) != "" {
		id := ""
		if err == nil && created != nil {
			id = created.ID
		}
		l.awaitReply(err, id)
	}
	return l.afterWrite(ctx, "", created, err, "created", func(ctx context.Context) (Written, error) {
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
	return l.afterWrite(ctx, id, updated, err, "renamed", func(ctx context.Context) (Written, error) {
		current, err := l.client.GetChat(ctx, id, 1)
		if err != nil || current.Title != title {
			return Written{}, err
		}
		return Written{Chat: current}, nil
	})
}

// afterWrite returns what a chat write to chat id ("": a new chat) that
// answered (chat, err) means for the caller: the answer, or, when it was
// lost after the request was sent, what settle's one read (find) found
// (ConfirmedByRead), or an *OutcomeUnknownError.
func (l *Planner) afterWrite(ctx context.Context, id string, chat *restclient.Chat, err error, action string,
	find func(context.Context) (Written, error),
) (Written, error) {
	l.chatsWritten(err, id)
	if err == nil {
		if chat != nil {
			l.remember(KindChat, chat.ID)
		}
		return Written{Chat: chat}, nil
	}
	found, confirmed, err := settle(ctx, err, &OutcomeUnknownError{Action: action},
		func(ctx context.Context) (Written, bool, error) {
			w, err := find(ctx)
			return w, w.Chat != nil || w.Listed != nil, err
		})
	found.ConfirmedByRead = confirmed
	if unsettled(err) {
		l.chatsWritten(nil, id) // the check's answer is no proof: the write may land yet
	}
	return found, err
}

// unsettled reports whether err leaves a write's outcome unknown
// (*OutcomeUnknownError): what its check read is no proof either way (the
// write may land after it), so what the check read must not be kept as
// the key's view: the caller forgets it again.
func unsettled(err error) bool {
	var unknown *OutcomeUnknownError
	return errors.As(err, &unknown)
}

// settle decides what a write that failed with err means for the caller.
// When its answer was lost after the request was sent
// (restclient.OutcomeUnknown), find looks for the write's effect with one
// read, which runs even past the operation's deadline (often why the
// answer was lost) but not when the client has gone: found, the write is
// answered as done (confirmed); otherwise the error is an
// *OutcomeUnknownError. Any other error is returned as it is.
func settle[T any](ctx context.Context, err error, unknown *OutcomeUnknownError,
	find func(context.Context) (T, bool, error),
) (found T, confirmed bool, _ error) {
	if !restclient.OutcomeUnknown(err) || errors.Is(ctx.Err(), context.Canceled) {
		return found, false, err
	}
	unknown.cause = err
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	found, ok, ferr := find(readCtx)
	if ferr != nil {
		return found, false, unknown
	}
	unknown.Checked = true
	if !ok {
		return found, false, unknown
	}
	return found, true, nil
}

// SentMessage is a message sent through SendMessage: the upstream's
// answer, or, when that answer was lost, the message one read found.
type SentMessage struct {
	Message         *restclient.Message
	ConfirmedByRead bool
}

// SendMessage sends a user message to a chat, once: one call. The
// assistant's reply is appended later by the server, so every chat
// answer this key read before is forgotten (here and in the shared
// cache), and the key's next read asks the server. When the answer is
// lost, one read of the chat's newest messages settles it: a user
// message with this content created since the request was sent.
func (l *Planner) SendMessage(ctx context.Context, chatID string, req restclient.SendMessageRequest) (SentMessage, error) {
	sent := time.Now()
	msg, err := l.client.SendMessage(ctx, chatID, req)
	// The hold first: a read of the key's chats made between the two,
	// after the write forgot them, would keep an answer without the reply.
	l.awaitReply(err, chatID)
	l.chatsWritten(err, chatID)
	if err == nil {
		return SentMessage{Message: msg}, nil
	}
	found, confirmed, err := settle(ctx, err, &OutcomeUnknownError{Action: "sent", Object: "message"},
		func(ctx context.Context) (*restclient.Message, bool, error) {
			c, err := l.client.GetChat(ctx, chatID, paging.OverflowPage)
			if err != nil {
				return nil, false, err
			}
			for i := len(c.Messages) - 1; i >= 0; i-- {
				if m := &c.Messages[i]; m.Role == "user" && m.Content == req.Content && !m.CreatedAt.Before(sent.Add(-clockSkew)) {
					return m, true, nil
				}
			}
			return nil, false, nil
		})
	if unsettled(err) {
		l.chatsWritten(nil, chatID)
	}
	if err != nil {
		return SentMessage{}, notFound(err, "chat", chatID)
	}
	return SentMessage{Message: found, ConfirmedByRead: confirmed}, nil
}

// DeleteChat deletes a chat, once: one call. Chat answers of this key
// are forgotten, so that the key's next read no longer sees it. When the
// answer is lost, one read of the chat settles it: gone (404) is deleted.
// A chat that does not exist is a *NotFoundError.
func (l *Planner) DeleteChat(ctx context.Context, id string) (confirmedByRead bool, _ error) {
	err := l.client.DeleteChat(ctx, id)
	l.chatsWritten(err, id)
	if err == nil {
		// The id stays known as a chat's: node(id) then costs the one
		// lookup that finds it gone, not one per kind.
		return false, nil
	}
	_, confirmed, err := settle(ctx, err, &OutcomeUnknownError{Action: "deleted"},
		func(ctx context.Context) (struct{}, bool, error) {
			_, err := l.client.GetChat(ctx, id, 1)
			if restclient.IsNotFound(err) {
				return struct{}{}, true, nil
			}
			return struct{}{}, false, err
		})
	if unsettled(err) {
		l.chatsWritten(nil, id)
	}
	if err != nil {
		return false, notFound(err, "chat", id)
	}
	return confirmed, nil
}
