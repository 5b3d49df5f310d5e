package graph

import (
	"context"

	"errors"
	"github.com/99designs/gqlgen/graphql"
	"net/http"
	"strings"
	"time"

	"suregql/graph/model"
	"suregql/paging"
	"suregql/planner"
	"suregql/restclient"
)

// Default window sizes when neither first nor last is given.
const (
	DefaultChatPage    = 20
	DefaultMessagePage = 25
)

const chatListName = "chats"

func chatList(ctx context.Context, args paging.Args) (*model.ChatConnection, error) {
	req, err := paging.Parse(chatListName, args, DefaultChatPage)
	if err != nil {
		return nil, err
	}
	l, err := planner.For(ctx)
	if err != nil {
		return nil, err
	}
	res, err := paging.Load(ctx, req, paging.Source[*restclient.ChatSummary]{
		// The server ignores per_page here; Load trusts the reported size.
		FixedPageSize: restclient.ChatsPerPage,
		Afford:        l.Affordable,
		Fetch: func(ctx context.Context, page, _ int) (paging.Page[*restclient.ChatSummary], error) {
			p, err := l.Client().ListChats(ctx, page)
			if err != nil {
				return paging.Page[*restclient.ChatSummary]{}, err
			}
			items := make([]*restclient.ChatSummary, len(p.Chats))
			for i := range p.Chats {
				items[i] = &p.Chats[i]
			}
			return paging.Page[*restclient.ChatSummary]{Items: items, Page: p.Pagination.Page, PerPage: p.Pagination.PerPage, Total: p.Pagination.TotalCount}, nil
		},
	})
	if err != nil {
		return nil, err
	}
	w := newWindow(chatListName, res, chatFromSummary)
	conn := &model.ChatConnection{Nodes: w.nodes, PageInfo: w.info, TotalCount: w.total, Edges: make([]*model.ChatEdge, len(w.nodes))}
	for i, n := range w.nodes {
		conn.Edges[i] = &model.ChatEdge{Cursor: w.cursors[i], Node: n}
	}
	return conn, nil
}

func messageListName(chatID string) string { return "chats/" + chatID + "/messages" }

// messageSource reads a chat's messages, 50 a page. The page a show answer
// already carried is reused without a call.
func messageSource(l *planner.Planner, chat *model.Chat) paging.Source[*model.Message] {
	return paging.Source[*model.Message]{
		FixedPageSize: restclient.MessagesPerPage,
		Afford:        l.Affordable,
		Fetch: func(ctx context.Context, page, _ int) (paging.Page[*model.Message], error) {
			if fp := chat.FirstPage; fp != nil && fp.Page == page {
				return paging.Page[*model.Message]{Items: fp.Messages, Page: fp.Page, PerPage: fp.PerPage, Total: fp.Total}, nil
			}
			c, err := l.Client().GetChat(ctx, chat.ID, page)
			if err != nil {
				return paging.Page[*model.Message]{}, asNotFound(err, "chat", chat.ID)
			}
			mp := messagePageFromREST(c)
			return paging.Page[*model.Message]{Items: mp.Messages, Page: mp.Page, PerPage: mp.PerPage, Total: mp.Total}, nil
		},
	}
}

func messageList(ctx context.Context, chat *model.Chat, args paging.Args) (*model.MessageConnection, error) {
	list := messageListName(chat.ID)
	req, err := paging.Parse(list, args, DefaultMessagePage)
	if err != nil {
		return nil, err
	}
	// message_count (list) or the pagination block (show) is current.
	req = req.WithKnownTotal(chat.MessageCount)
	var res paging.Result[*model.Message]
	if w, empty, known := req.Empty(); empty && known {
		res.Window = w
	} else {
		l, err := planner.For(ctx)
		if err != nil {
			return nil, err
		}
		if res, err = paging.Load(ctx, req, messageSource(l, chat)); err != nil {
			return nil, err
		}
	}
	w := newWindow(list, res, func(m *model.Message) *model.Message { return m })
	conn := &model.MessageConnection{Nodes: w.nodes, PageInfo: w.info, TotalCount: w.total, Edges: make([]*model.MessageEdge, len(w.nodes))}
	for i, n := range w.nodes {
		conn.Edges[i] = &model.MessageEdge{Cursor: w.cursors[i], Node: n}
	}
	return conn, nil
}

// lastMessageAt reads the newest message of a chat whose show answer did
// not hold it: the last page, asked by number (an overflowing page number
// would also answer the last page).
func lastMessageAt(ctx context.Context, l *planner.Planner, chat *model.Chat) (*time.Time, error) {
	total, perPage := chat.MessageCount, restclient.MessagesPerPage
	if fp := chat.FirstPage; fp != nil {
		total, perPage = fp.Total, fp.PerPage
	}
	if total == 0 {
		return nil, nil
	}
	lastPage := (total + perPage - 1) / perPage
	c, err := l.Client().GetChat(ctx, chat.ID, lastPage)
	if err != nil {
		return nil, asNotFound(err, "chat", chat.ID)
	}
	if n := len(c.Messages); n > 0 {
		t := c.Messages[n-1].CreatedAt
		return &t, nil
	}
	return nil, nil
}

func blankTitle() *model.UserError {
	return &model.UserError{Field: []string{"input", "title"}, Message: "Title can't be blank", Code: "BLANK"}
}

// writeOutcome is the payload of a chat write: the chat, or the user errors
// an upstream 404 or 422 stands for, or (for anything else) the error.
func writeOutcome(chat *model.Chat, err error) (*model.Chat, []*model.UserError, error) {
	if err == nil {
		return chat, []*model.UserError{}, nil
	}
	if ue := userErrorsFrom(err); ue != nil {
		return nil, ue, nil
	}
	return nil, nil, err
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

// showPage picks the page of messages the chat's show call should carry.
// When the selection reads only the newest messages (messages with last
// and no before, or lastMessageAt without a window from the start), it asks
// for a page past the end: the upstream answers an overflowing page with its
// last page, so the chat and its newest messages come in one call.
func showPage(ctx context.Context) int {
	oc := graphql.GetOperationContext(ctx)
	wantsTail, wantsHead := false, false
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
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
	if wantsTail && !wantsHead {
		return paging.OverflowPage
	}
	return 1
}
