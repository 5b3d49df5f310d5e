package restclient

import (
	"encoding/json"
	"net/http"
	"time"
)

// Pagination is the pagy block of a list answer, as the server reported it.
// Trust it over the request: an overflowing page answers the last page (Page
// is then lower than asked) and the chat list ignores per_page. Since
// v0.6.6 the chats and a chat's messages report "per_page": null (PerPage
// 0): Size works it out from the page itself.
type Pagination struct {
	Page       int `json:"page"`
	PerPage    int `json:"per_page"`
	TotalCount int `json:"total_count"`
	TotalPages int `json:"total_pages"`
}

// Size returns the page size of a page that held n items: the reported
// per_page, or, when the server sent none, what the page shows of it. A
// page before the last holds a whole page; the last page p (past the
// first) holds what is left after p-1 whole pages. A list of one page
// tells nothing (0): its items sit at their offsets whatever the size.
func (p Pagination) Size(n int) int {
	switch {
	case p.PerPage > 0:
		return p.PerPage
	case p.Page >= 1 && p.Page < p.TotalPages && n > 0:
		return n
	case p.Page > 1 && p.Page >= p.TotalPages && p.TotalCount > n:
		return (p.TotalCount - n) / (p.Page - 1)
	}
	return 0
}

// CategoryRef is the embedded {"id","name"} parent of a subcategory.
type CategoryRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Category is a transaction category. Parent is nil for a root category;
// the upstream allows two levels only. Classification is "" when the
// server sent none: categories lost it in v0.6.9, when they became global.
type Category struct {
	ID                 string       `json:"id"`
	Name               string       `json:"name"`
	Classification     string       `json:"classification"` // "income", "expense", or "" (not sent)
	Color              string       `json:"color"`
	Icon               string       `json:"icon"`
	Parent             *CategoryRef `json:"parent"`
	SubcategoriesCount int          `json:"subcategories_count"`
	CreatedAt          time.Time    `json:"created_at"`
	UpdatedAt          time.Time    `json:"updated_at"`
}

// CategoryPage is one page of GET /categories.
type CategoryPage struct {
	Categories []Category `json:"categories"`
	Pagination Pagination `json:"pagination"`
}

// ChatSummary is an element of GET /chats. FirstMessageAt is what Sure
// names last_message_at: the time of the chat's oldest message (its view
// renders chat.messages.ordered.first, and Message.ordered is oldest
// first, in every version; UPSTREAM.md). The list tells nothing of the
// newest message.
type ChatSummary struct {
	ID             string     `json:"id"`
	Title          string     `json:"title"`
	FirstMessageAt *time.Time `json:"last_message_at"`
	MessageCount   int        `json:"message_count"`
	Error          *string    `json:"error"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
}

// ChatPage is one page of GET /chats (20 chats a page, fixed by the server).
type ChatPage struct {
	Chats      []ChatSummary `json:"chats"`
	Pagination Pagination    `json:"pagination"`
}

// Chat is one chat with one page of its messages (oldest first; 20 a page
// since v0.6.6, 50 before), as answered by show, create and update. Since
// v0.7.x, create and update answer "messages": [] without a pagination
// block whatever the chat holds: MessagesShown tells the two apart.
type Chat struct {
	ID         string      `json:"id"`
	Title      string      `json:"title"`
	Error      *string     `json:"error"`
	CreatedAt  time.Time   `json:"created_at"`
	UpdatedAt  time.Time   `json:"updated_at"`
	Messages   []Message   `json:"messages"`
	Pagination *Pagination `json:"pagination"`
}

// MessagePage is the page of messages a chat answer carries, with where
// it sits in the chat's whole list.
type MessagePage struct {
	Page, PerPage, Total int
	// SizeShown: PerPage is what the answer reported or showed, not a
	// guess.
	SizeShown bool
	Messages  []Message
}

// MessagesShown reports whether the answer shows a page of the chat's
// messages: a show answer always does, with its pagination block; a
// v0.7.x create or update answer has none and an empty list that says
// nothing of the chat's messages.
func (c *Chat) MessagesShown() bool { return c.Pagination != nil || len(c.Messages) > 0 }

// MessagePage returns the page of messages c carries. An answer without a
// pagination block is one complete page; a total below what the page holds
// is raised to it. PerPage is the size the answer reports or shows, else
// guess (the size learnt from other answers).
func (c *Chat) MessagePage(guess int) MessagePage {
	p := MessagePage{Page: 1, PerPage: guess, Total: len(c.Messages), Messages: c.Messages}
	if c.Pagination != nil {
		p.Page = max(c.Pagination.Page, 1)
		if size := c.Pagination.Size(len(c.Messages)); size > 0 {
			p.PerPage = size
			p.SizeShown = true
		}
		p.Total = max(c.Pagination.TotalCount, len(c.Messages))
	}
	if p.PerPage <= 0 {
		p.PerPage = MessagesPerPage
	}
	return p
}

// HoldsNewest reports whether the page holds the chat's newest message
// (or the chat has none): the newest is on the last page. An empty page of
// a chat with messages is a page past the end that the upstream did not
// turn into its last page: it holds nothing.
func (p MessagePage) HoldsNewest() bool {
	last := p.Page*p.PerPage >= p.Total || len(p.Messages) >= p.Total
	return last && (len(p.Messages) > 0 || p.Total == 0)
}

// HoldsOldest reports whether the page holds the chat's oldest message
// (or the chat has none): the oldest is first on page 1.
func (p MessagePage) HoldsOldest() bool {
	return p.Page == 1 && (len(p.Messages) > 0 || p.Total == 0)
}

// Message is a chat message. Model is set on assistant messages only.
// AIResponseStatus is sent with a message just created by
// POST /chats/{id}/messages ("pending": the reply comes later).
type Message struct {
	ID        string     `json:"id"`
	Type      string     `json:"type"` // user_message | assistant_message
	Role      string     `json:"role"` // user | assistant
	Content   string     `json:"content"`
	Model     *string    `json:"model"`
	ToolCalls []ToolCall `json:"tool_calls"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`

	ChatID           string  `json:"chat_id,omitempty"`
	AIResponseStatus *string `json:"ai_response_status,omitempty"`
}

// ToolCall is a function call made by the assistant. Arguments and result
// are free-form JSON; FunctionResult is nil when absent or null.
type ToolCall struct {
	ID                string          `json:"id"`
	FunctionName      string          `json:"function_name"`
	FunctionArguments json.RawMessage `json:"function_arguments"`
	FunctionResult    json.RawMessage `json:"function_result"`
	CreatedAt         time.Time       `json:"created_at"`
}

// Import is a bulk import as GET /imports/{id} answers it. Error is nil
// when the upstream omits the key (it does when there is no error);
// StatusDetail is nil before v0.7.1.
type Import struct {
	ID            string              `json:"id"`
	Type          string              `json:"type"`
	Status        string              `json:"status"`
	AccountID     *string             `json:"account_id"`
	Error         *string             `json:"error"`
	Configuration ImportConfiguration `json:"configuration"`
	Stats         ImportStats         `json:"stats"`
	StatusDetail  *ImportStatusDetail `json:"status_detail"`
	CreatedAt     time.Time           `json:"created_at"` // upstream sends milliseconds here
	UpdatedAt     time.Time           `json:"updated_at"`
}

// ImportStatusDetail is where an import stands (v0.7.1): each flag is nil
// when the server did not send it.
type ImportStatusDetail struct {
	Uploaded    *bool `json:"uploaded"`
	Configured  *bool `json:"configured"`
	Terminal    *bool `json:"terminal"`
	Cleaned     *bool `json:"cleaned"`
	Publishable *bool `json:"publishable"`
	Revertable  *bool `json:"revertable"`
}

// ImportSummary is an element of GET /imports (v0.6.7): no configuration
// and no stats but the row count.
type ImportSummary struct {
	ID           string              `json:"id"`
	Type         string              `json:"type"`
	Status       string              `json:"status"`
	AccountID    *string             `json:"account_id"`
	RowsCount    *int                `json:"rows_count"`
	Error        *string             `json:"error"`
	StatusDetail *ImportStatusDetail `json:"status_detail"`
	CreatedAt    time.Time           `json:"created_at"`
	UpdatedAt    time.Time           `json:"updated_at"`
}

// ImportConfiguration is the column mapping of an import; any field may be
// null.
type ImportConfiguration struct {
	DateColLabel      *string `json:"date_col_label"`
	AmountColLabel    *string `json:"amount_col_label"`
	NameColLabel      *string `json:"name_col_label"`
	CategoryColLabel  *string `json:"category_col_label"`
	TagsColLabel      *string `json:"tags_col_label"`
	NotesColLabel     *string `json:"notes_col_label"`
	AccountColLabel   *string `json:"account_col_label"`
	DateFormat        *string `json:"date_format"`
	NumberFormat      *string `json:"number_format"`
	SignageConvention *string `json:"signage_convention"`
}

// ImportStats counts the rows of an import; the last three are sent from
// v0.7.1 on (nil before).
type ImportStats struct {
	RowsCount               int  `json:"rows_count"`
	ValidRowsCount          *int `json:"valid_rows_count"`
	InvalidRowsCount        *int `json:"invalid_rows_count"`
	MappingsCount           *int `json:"mappings_count"`
	UnassignedMappingsCount *int `json:"unassigned_mappings_count"`
}

// UnmarshalJSON reads a tool call, turning a null function_result into nil
// so that callers test one thing.
func (t *ToolCall) UnmarshalJSON(data []byte) error {
	type plain ToolCall
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	if string(p.FunctionResult) == "null" {
		p.FunctionResult = nil
	}
	if string(p.FunctionArguments) == "null" {
		p.FunctionArguments = nil
	}
	*t = ToolCall(p)
	return nil
}

// ReplyWindow is how long after a chat's newest message changed the
// assistant may still be writing (Sure streams its reply into a message it
// saved at the first chunk, and no answer says whether it is done).
const ReplyWindow = 2 * time.Minute

// AwaitsReply reports whether resp, the answer of a GET at path (relative
// to /api/v1), is a chat whose assistant is still to write, or still
// writing, its reply: its newest message is the user's, with no error, or
// changed less than ReplyWindow ago. The answer is about to change (by
// the server, asynchronously) and must not be kept.
func AwaitsReply(path string, resp *Response) bool {
	if Endpoint(http.MethodGet, path) != "GET /api/v1/chats/{id}" || resp == nil || resp.Status != http.StatusOK {
		return false
	}
	c, err := decodeShared[Chat](resp)
	if err != nil || c.Error != nil || len(c.Messages) == 0 {
		return false
	}
	p := c.MessagePage(0)
	newest := &c.Messages[len(c.Messages)-1]
	if !p.HoldsNewest() {
		return false
	}
	return newest.Role == "user" || time.Since(newest.UpdatedAt) < ReplyWindow
}

// ReplyCame reports whether resp, the answer of a GET at path, is a chat
// whose newest message is the assistant's: a reply to the messages before
// it has come (it may still grow, but the chat's count and last message
// time are what they will stay).
func ReplyCame(path string, resp *Response) bool {
	if Endpoint(http.MethodGet, path) != "GET /api/v1/chats/{id}" || resp == nil || resp.Status != http.StatusOK {
		return false
	}
	c, err := decodeShared[Chat](resp)
	if err != nil || len(c.Messages) == 0 || !c.MessagePage(0).HoldsNewest() {
		return false
	}
	return c.Messages[len(c.Messages)-1].Role == "assistant"
}
