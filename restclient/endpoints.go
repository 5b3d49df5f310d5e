package restclient

import (
	"context"
	"github.com/suregql/suregql/internal/limits/badinput"
	"net/http"
	"net/url"
	"strconv"

	"github.com/google/uuid"
)

// MaxPerPage is the largest per_page the categories endpoint honours; any
// larger value is silently replaced by 25, so it is never sent.
const MaxPerPage = 100

// ChatsPerPage is the fixed page size of GET /chats (per_page is ignored).
const ChatsPerPage = 20

// MessagesPerPage is the fixed page size of a chat's messages since
// v0.6.6; LegacyMessagesPerPage is the one before. Answers tell which one a
// server uses (Pagination.Size).
const (
	MessagesPerPage       = 20
	LegacyMessagesPerPage = 50
)

// CanonicalID returns the canonical form of a UUID, or a *badinput.Error
// for field, before any request is sent: the upstream would answer 404 for
// a path id, but for parent_id it casts junk to NULL and answers the root
// categories. uuid.Parse accepts braces and URNs, so the parsed value's
// String() is sent, never the caller's text.
func CanonicalID(field, id string) (string, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return "", badinput.New(field, badinput.Quote(id)+" is not a UUID")
	}
	return u.String(), nil
}

// ListCategoriesOptions are the filters and page of GET /categories. Zero
// values are not sent.
type ListCategoriesOptions struct {
	Page           int
	PerPage        int    // 1..MaxPerPage; 0 leaves the server default (25)
	Classification string // "income" or "expense"
	RootsOnly      bool
	ParentID       string // must be a UUID: the server turns junk into "roots"
}

// ListCategories fetches one page of the family's categories, ordered by
// name then id. Like every GET method's, its result is shared and
// read-only (see Client).
func (c *Client) ListCategories(ctx context.Context, opts ListCategoriesOptions) (*CategoryPage, error) {
	q := url.Values{}
	if opts.Page > 0 {
		q.Set("page", strconv.Itoa(opts.Page))
	}
	if opts.PerPage > 0 {
		q.Set("per_page", strconv.Itoa(min(opts.PerPage, MaxPerPage)))
	}
	if opts.Classification != "" {
		q.Set("classification", opts.Classification)
	}
	if opts.RootsOnly {
		q.Set("roots_only", "true")
	}
	if opts.ParentID != "" {
		id, err := CanonicalID("parent_id", opts.ParentID)
		if err != nil {
			return nil, err
		}
		q.Set("parent_id", id)
	}
	return get[CategoryPage](ctx, c, "categories", q)
}

// GetCategory fetches one category; the result is shared and read-only.
func (c *Client) GetCategory(ctx context.Context, id string) (*Category, error) {
	id, err := CanonicalID("id", id)
	if err != nil {
		return nil, err
	}
	return get[Category](ctx, c, "categories/"+url.PathEscape(id), nil)
}

// ListChats fetches one page (20 chats) of the user's chats, newest first;
// the result is shared and read-only.
func (c *Client) ListChats(ctx context.Context, page int) (*ChatPage, error) {
	q := url.Values{}
	if page > 0 {
		q.Set("page", strconv.Itoa(page))
	}
	return get[ChatPage](ctx, c, "chats", q)
}

// GetChat fetches one chat with the given page (20 messages, 50 before
// v0.6.6) of its messages, oldest first; the result is shared and
// read-only.
func (c *Client) GetChat(ctx context.Context, id string, page int) (*Chat, error) {
	id, err := CanonicalID("id", id)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if page > 1 {
		q.Set("page", strconv.Itoa(page))
	}
	return get[Chat](ctx, c, "chats/"+url.PathEscape(id), q)
}

// CreateChatRequest is the body of POST /chats. Empty Message and Model are
// omitted.
type CreateChatRequest struct {
	Title   string `json:"title"`
	Message string `json:"message,omitempty"`
	Model   string `json:"model,omitempty"`
}

// CreateChat creates a chat. A blank title is answered 422 (an *APIError
// with Details).
func (c *Client) CreateChat(ctx context.Context, req CreateChatRequest) (*Chat, error) {
	var out Chat
	if err := c.write(ctx, http.MethodPost, "chats", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateChat renames a chat.
func (c *Client) UpdateChat(ctx context.Context, id, title string) (*Chat, error) {
	id, err := CanonicalID("id", id)
	if err != nil {
		return nil, err
	}
	var out Chat
	body := struct {
		Title string `json:"title"`
	}{title}
	if err := c.write(ctx, http.MethodPatch, "chats/"+url.PathEscape(id), body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteChat deletes a chat (v0.6.0): 204 without a body.
func (c *Client) DeleteChat(ctx context.Context, id string) error {
	id, err := CanonicalID("id", id)
	if err != nil {
		return err
	}
	return c.write(ctx, http.MethodDelete, "chats/"+url.PathEscape(id), nil, nil)
}

// SendMessageRequest is the body of POST /chats/{id}/messages. An empty
// Model is omitted (the server's default).
type SendMessageRequest struct {
	Content string `json:"content"`
	Model   string `json:"model,omitempty"`
}

// SendMessage adds a user message to a chat (v0.6.0). The answer is the
// message, with AIResponseStatus "pending": the assistant's reply is
// appended to the chat later, asynchronously. Blank content is answered
// 422 (an *APIError with Details).
func (c *Client) SendMessage(ctx context.Context, chatID string, req SendMessageRequest) (*Message, error) {
	id, err := CanonicalID("chat_id", chatID)
	if err != nil {
		return nil, err
	}
	var out Message
	if err := c.write(ctx, http.MethodPost, "chats/"+url.PathEscape(id)+"/messages", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateCategoryRequest is a new category (v0.7.1). Empty fields are
// omitted: the server picks the colour, "shapes" for the icon, and a
// root.
type CreateCategoryRequest struct {
	Name     string `json:"name"`
	Color    string `json:"color,omitempty"`
	Icon     string `json:"icon,omitempty"`
	ParentID string `json:"parent_id,omitempty"`
}

// CreateCategory creates a category (v0.7.1). Invalid input (a blank or
// taken name, a parent outside the family or a third level) is answered
// 422 with a message; a read-only key 403.
func (c *Client) CreateCategory(ctx context.Context, req CreateCategoryRequest) (*Category, error) {
	if req.ParentID != "" {
		id, err := CanonicalID("parent_id", req.ParentID)
		if err != nil {
			return nil, err
		}
		req.ParentID = id
	}
	body := struct {
		Category CreateCategoryRequest `json:"category"`
	}{req}
	var out Category
	if err := c.write(ctx, http.MethodPost, "categories", body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
