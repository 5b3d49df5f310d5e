package restclient

import (
	"encoding/json"
	"time"
)

// Pagination is the pagy block of a list answer, as the server reported it.
// Trust it over the request: an overflowing page answers the last page (Page
// is then lower than asked) and the chat list ignores per_page.
type Pagination struct {
	Page       int `json:"page"`
	PerPage    int `json:"per_page"`
	TotalCount int `json:"total_count"`
	TotalPages int `json:"total_pages"`
}

// CategoryRef is the embedded {"id","name"} parent of a subcategory.
type CategoryRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Category is a transaction category. Parent is nil for a root category;
// the upstream allows two levels only.
type Category struct {
	ID                 string       `json:"id"`
	Name               string       `json:"name"`
	Classification     string       `json:"classification"` // "income" or "expense"
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

// ChatSummary is an element of GET /chats.
type ChatSummary struct {
	ID            string     `json:"id"`
	Title         string     `json:"title"`
	LastMessageAt *time.Time `json:"last_message_at"`
	MessageCount  int        `json:"message_count"`
	Error         *string    `json:"error"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
}

// ChatPage is one page of GET /chats (20 chats a page, fixed by the server).
type ChatPage struct {
	Chats      []ChatSummary `json:"chats"`
	Pagination Pagination    `json:"pagination"`
}

// Chat is one chat with one page of its messages (oldest first, 50 a page),
// as answered by show, create and update.
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
	Messages             []Message
}

// MessagePage returns the page of messages c carries. An answer without a
// pagination block is one complete page; a total below what the page holds
// is raised to it.
func (c *Chat) MessagePage() MessagePage {
	p := MessagePage{Page: 1, PerPage: MessagesPerPage, Total: len(c.Messages), Messages: c.Messages}
	if c.Pagination != nil {
		p.Page = max(c.Pagination.Page, 1)
		if c.Pagination.PerPage > 0 {
			p.PerPage = c.Pagination.PerPage
		}
		p.Total = max(c.Pagination.TotalCount, len(c.Messages))
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

// Message is a chat message. Model is set on assistant messages only.
type Message struct {
	ID        string     `json:"id"`
	Type      string     `json:"type"` // user_message | assistant_message
	Role      string     `json:"role"` // user | assistant
	Content   string     `json:"content"`
	Model     *string    `json:"model"`
	ToolCalls []ToolCall `json:"tool_calls"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
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

// Import is a bulk import. Error is nil when the upstream omits the key
// (it does when there is no error).
type Import struct {
	ID            string              `json:"id"`
	Type          string              `json:"type"`
	Status        string              `json:"status"`
	AccountID     *string             `json:"account_id"`
	Error         *string             `json:"error"`
	Configuration ImportConfiguration `json:"configuration"`
	Stats         ImportStats         `json:"stats"`
	CreatedAt     time.Time           `json:"created_at"` // upstream sends milliseconds here
	UpdatedAt     time.Time           `json:"updated_at"`
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

// ImportStats counts the rows of an import.
type ImportStats struct {
	RowsCount      int  `json:"rows_count"`
	ValidRowsCount *int `json:"valid_rows_count"`
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
