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
func writeOutcome(w planner.Written, err error) (*model.Chat, []*model.UserError, error) {
	if err != nil {
		if ue := userErrorsFrom(err); ue != nil {
			return nil, ue, nil
		}
		return nil, nil, err
	}
	if w.Listed != nil {
		return chatFromSummary(w.Listed), []*model.UserError{}, nil
	}
	return chatFromShow(w.Chat), []*model.UserError{}, nil
}

// userErrorsFrom turns a 404 (no such chat) or 422 answer into user
// errors, or returns nil for any other error.
func userErrorsFrom(err error) []*model.UserError {
	if restclient.IsNotFound(err) {
		return []*model.UserError{{Field: []string{"input", "id"}, Message: "no chat with this id", Code: "NOT_FOUND"}}
	}
	var api *restclient.APIError
	if !errors.As(err, &api) || api.StatusCode != http.StatusUnprocessableEntity {
		return nil
	}
	out := []*model.UserError{}
	for _, d := range api.Details {
		ue := &model.UserError{Message: d, Code: "INVALID"}
		if strings.HasPrefix(d, "Title") {
			ue.Field = []string{"input", "title"}
		}
		if strings.Contains(d, "blank") {
			ue.Code = "BLANK"
		}
		out = append(out, ue)
	}
	if len(out) == 0 {
		msg := api.Code
		if msg == "" {
			msg = "the Sure server rejected the input"
		}
		out = append(out, &model.UserError{Message: msg, Code: "INVALID"})
	}
	return out
}
