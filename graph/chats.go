package graph

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"suregql/graph/model"
	"suregql/paging"
	"suregql/planner"
	"suregql/restclient"
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

// chatWant tells the planner what the selection of one chat reads of its
// messages: only the newest (messages with last and no before, or
// lastMessageAt), or a window from the start too.
func chatWant(ctx context.Context) planner.ChatWant {
	return chatWantOf(graphql.GetOperationContext(ctx), graphql.CollectFieldsCtx(ctx, nil))
}

// chatWantOf is chatWant for the fields a selection reads of a chat.
func chatWantOf(oc *graphql.OperationContext, fields []graphql.CollectedField) planner.ChatWant {
	wantsTail, wantsHead := false, false
	for _, f := range fields {
		switch f.Name {
		case "lastMessageAt":
			wantsTail = true
		case "messages":
			args := f.ArgumentMap(oc.Variables)
			if args["last"] != nil && args["before"] == nil {
				wantsTail = true
			} else {
				wantsHead = true
			}
		}
	}
	return planner.ChatWant{NewestOnly: wantsTail && !wantsHead}
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
	return m, []*model.UserError{}, nil
}

// payloadChatWant returns what a write payload's chat selection reads of
// the chat's messages, and whether it reads any (messageCount, messages,
// lastMessageAt).
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
		case "messageCount", "messages", "lastMessageAt":
			return chatWantOf(oc, fields), true
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
		messages = []string{api.Message}
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
