package graph

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/suregql/suregql/graph/model"
	"github.com/suregql/suregql/internal/planning/paging"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/restclient"
)

// chatConnection maps a window of the chat list.
func chatConnection(ctx context.Context, res paging.Result[*restclient.ChatSummary]) *model.ChatConnection {
	w := newWindow(ctx, "ChatConnection", res, chatFromSummary, func(cursor string, n *model.Chat) *model.ChatEdge {
		return &model.ChatEdge{Cursor: cursor, Node: n}
	})
	return &model.ChatConnection{Nodes: w.nodes, Edges: w.edges, PageInfo: w.info, TotalCount: w.total}
}

// messageConnection maps a window of a chat's messages.
func messageConnection(ctx context.Context, res paging.Result[*restclient.Message]) *model.MessageConnection {
	w := newWindow(ctx, "MessageConnection", res, messageFromREST, func(cursor string, n *model.Message) *model.MessageEdge {
		return &model.MessageEdge{Cursor: cursor, Node: n}
	})
	return &model.MessageConnection{Nodes: w.nodes, Edges: w.edges, PageInfo: w.info, TotalCount: w.total}
}

// chatWant tells the planner what the selection of chat id reads of its
// messages: only the newest (messages with last and no before, or
// lastMessageAt), or a window from the start too, or a window that starts
// further on (after a cursor, or before one).
func chatWant(ctx context.Context, id string) planner.ChatWant {
	return chatWantOf(graphql.GetOperationContext(ctx), graphql.CollectFieldsCtx(ctx, nil), id)
}

// chatWantOf is chatWant for the fields a selection reads of a chat;
// chatID names the chat whose message cursors the windows may hold ("":
// unknown, no window is placed by its cursors).
func chatWantOf(oc *graphql.OperationContext, fields []graphql.CollectedField, chatID string) planner.ChatWant {
	wantsTail, wantsHead := false, false
	from, froms := 0, 0
	for _, f := range fields {
		switch f.Name {
		case "lastMessageAt":
			wantsTail = true
		case "firstMessageAt":
			wantsHead = true // page 1; a window elsewhere does not hold it
			if froms == 0 || from != 0 {
				froms++
			}
			from = 0
		case "messages":
			args := f.ArgumentMap(oc.Variables)
			if args["last"] != nil && args["before"] == nil {
				wantsTail = true
				continue
			}
			wantsHead = true
			s := windowStart(args, chatID)
			if froms == 0 || s != from {
				froms++
			}
			from = s
		}
	}
	want := planner.ChatWant{NewestOnly: wantsTail && !wantsHead}
	if froms == 1 && !want.NewestOnly {
		// Every window read starts at the same message: the show asks the
		// page holding it, which then answers the window's first page too.
		want.From = from
	}
	return want
}

// windowStart returns the offset of the first message a window of a
// chat's messages reads, as its cursors place it: after a cursor (with
// first, or the default size), or the last n before a cursor; 0 for a
// window from the start, or one its cursors do not place (an invalid
// cursor is the messages field's own error, later).
func windowStart(args map[string]any, chatID string) int {
	if chatID == "" {
		return 0
	}
	cursor := func(name string) (paging.Position, bool) {
		c, ok := args[name].(string)
		if !ok {
			return paging.Position{}, false
		}
		p, err := paging.DecodeCursor(planner.MessageListName(chatID), c)
		return p, err == nil
	}
	after, hasAfter := cursor("after")
	before, hasBefore := cursor("before")
	last, hasLast := intArg(args["last"])
	switch {
	case hasAfter && args["last"] == nil:
		return after.Offset + 1
	case hasBefore && hasLast && args["after"] == nil:
		return max(before.Offset-last, 0)
	}
	return 0
}

// intArg reads an Int argument as gqlgen hands it over: int64 from a
// literal, json.Number from a variable.
func intArg(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil
	}
	return 0, false
}

func blankTitle() *model.UserError {
	return &model.UserError{Field: []string{"input", "title"}, Message: "Title can't be blank", Code: "BLANK"}
}

// writeOutcome is the payload of a chat write: the chat, or the user errors
// an upstream 404 or 422 stands for, or (for anything else) the error.
//
// Since v0.7.x the upstream answers a create or an update with
// "messages": [] and no pagination, whatever the chat holds: when the
// payload reads the chat's messages (their count, a window, the newest),
// one read of the chat answers them (counted like any call). sent is what
// the write itself put in the chat (a createChat's first message: 1), the
// count when that read fails; -1 when the write does not tell it (a
// rename), and the read's error is then the field's.
func writeOutcome(ctx context.Context, p *planner.Planner, w planner.Written, err error, sent int) (*model.Chat, []*model.UserError, error) {
	if err != nil {
		if ue := userErrorsFrom(err); ue != nil {
			return nil, ue, nil
		}
		return nil, nil, err
	}
	if w.Listed != nil {
		return chatFromSummary(w.Listed), []*model.UserError{}, nil
	}
	if w.Chat.MessagesShown() {
		return chatFromShow(w.Chat, p.MessagePage(w.Chat)), []*model.UserError{}, nil
	}
	want, reads := payloadChatWant(ctx)
	if !reads {
		// Nothing of the messages is read: the answer's own fields do.
		return chatFromShow(w.Chat, p.MessagePage(w.Chat)), []*model.UserError{}, nil
	}
	c, rerr := p.Chat(ctx, w.Chat.ID, want)
	if rerr == nil {
		return chatFromShow(c, p.MessagePage(c)), []*model.UserError{}, nil
	}
	if sent < 0 {
		return nil, nil, rerr
	}
	// The chat holds what the write sent; its messages' own fields read
	// them again, and report the failure where it happens.
	m := chatFromShow(w.Chat, p.MessagePage(w.Chat))
	m.FirstPage, m.MessageCount, m.LastMessageKnown, m.LastMessageAt = nil, sent, sent == 0, nil
	m.FirstMessageKnown, m.FirstMessageAt = sent == 0, nil
	return m, []*model.UserError{}, nil
}

// payloadChatWant returns what a write payload's chat selection reads of
// the chat's messages, and whether it reads any (messageCount, messages,
// lastMessageAt, firstMessageAt).
func payloadChatWant(ctx context.Context) (planner.ChatWant, bool) {
	oc := graphql.GetOperationContext(ctx)
	var fields []graphql.CollectedField
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
		if f.Name == "chat" {
			fields = append(fields, collect(oc, f, "Chat")...)
		}
	}
	for _, f := range fields {
		switch f.Name {
		case "messageCount", "messages", "lastMessageAt", "firstMessageAt":
			return chatWantOf(oc, fields, ""), true
		}
	}
	return planner.ChatWant{}, false
}

// userErrorsFrom turns a 404 (no such chat) or 422 answer into user
// errors, or returns nil for any other error. idField names the input
// field of the chat's id.
func userErrorsFrom(err error, idField ...string) []*model.UserError {
	var nf *planner.NotFoundError
	if errors.As(err, &nf) || (restclient.IsNotFound(err) && !restclient.IsNoRoute(err)) {
		field := "id"
		if len(idField) > 0 {
			field = idField[0]
		}
		return []*model.UserError{{Field: []string{"input", field}, Message: "no chat with this id", Code: "NOT_FOUND"}}
	}
	return invalidInput(err)
}

// invalidInput turns a 422 answer (the upstream found the input invalid)
// into user errors, one per message it gave, or returns nil for any other
// error.
func invalidInput(err error) []*model.UserError {
	var api *restclient.APIError
	if !errors.As(err, &api) || api.StatusCode != http.StatusUnprocessableEntity {
		return nil
	}
	messages := api.Details
	if len(messages) == 0 && api.Message != "" {
		// The categories controller joins the full messages of the failed
		// validations into one ("Color is invalid, Name has already been
		// taken"): each is a user error of its own field.
		messages = splitFullMessages(api.Message)
	}
	out := []*model.UserError{}
	for _, d := range messages {
		out = append(out, userErrorOf(d))
	}
	if len(out) == 0 {
		msg := api.Code
		if msg == "" || msg == "unprocessable_entity" {
			msg = "the Sure server rejected the input"
		}
		out = append(out, &model.UserError{Message: msg, Code: "INVALID"})
	}
	return out
}

// splitFullMessages splits Rails' full messages joined with ", " where
// the next one starts with an attribute of inputFields, so that a comma
// within one message does not split it.
func splitFullMessages(msg string) []string {
	var out []string
	start := 0
	for i := 0; i+1 < len(msg); i++ {
		if msg[i] != ',' || msg[i+1] != ' ' {
			continue
		}
		if attr, _, ok := strings.Cut(msg[i+2:], " "); ok && inputFields[attr] != "" {
			out = append(out, msg[start:i])
			start = i + 2
		}
	}
	return append(out, msg[start:])
}

// inputFields maps the attribute a Rails validation message starts with
// to the input field it is about.
var inputFields = map[string]string{
	"Title": "title", "Content": "content", "Name": "name", "Parent": "parentId", "Color": "color", "Icon": "icon",
}

// userErrorOf is the user error of one validation message, e.g. "Name
// has already been taken".
func userErrorOf(msg string) *model.UserError {
	ue := &model.UserError{Message: msg, Code: "INVALID"}
	attr, _, _ := strings.Cut(msg, " ")
	if f, ok := inputFields[attr]; ok {
		ue.Field = []string{"input", f}
	}
	switch {
	case strings.Contains(msg, "blank"):
		ue.Code = "BLANK"
	case strings.Contains(msg, "taken"):
		ue.Code = "TAKEN"
	}
	return ue
}
