// Package model holds the GraphQL types of the facade: models_gen.go is
// generated from schema.graphqls; the hand-written models here carry what the
// lazy fields (Category.parent, Category.subcategories, Chat.messages) need.
package model

import (
	"time"

	"github.com/suregql/suregql/restclient"
)

// Category is a category as the upstream described it. Parent and
// subcategories are resolved lazily from ParentID/ParentName and
// SubcategoriesCount.
type Category struct {
	ID                 string
	Name               string
	Classification     *CategoryClassification // nil: the upstream sent none
	Color              string
	Icon               string
	ParentID           string // "" for a root category
	ParentName         string
	SubcategoriesCount int
	CreatedAt          time.Time
	UpdatedAt          time.Time
	// Upstream is the answer the category was mapped from: what the
	// planner plans its subcategories and parent with.
	Upstream *restclient.Category
}

// Chat is a chat from the list, a show answer or a mutation. The list gives
// MessageCount and FirstMessageAt (the oldest message's time, which Sure
// names last_message_at); a show answer gives a page of messages instead,
// kept in FirstPage so Chat.messages can reuse it.
type Chat struct {
	ID           string
	Title        string
	Error        *string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	MessageCount int
	// FirstMessageAt is the oldest message's time; FirstMessageKnown is
	// true when it is authoritative (from the list, or a page holding the
	// oldest message): else the resolver reads it.
	FirstMessageAt    *time.Time
	FirstMessageKnown bool
	// LastMessageAt is the newest message's time; LastMessageKnown is
	// true when it is authoritative (a chat of no or one message, or a
	// page holding the newest message): else the resolver reads it.
	LastMessageAt    *time.Time
	LastMessageKnown bool
	// FirstPage is the page of messages a show/create/update answer carried,
	// or nil for a chat from the list.
	FirstPage *restclient.MessagePage
}

// Message is a chat message.
type Message struct {
	ID        string
	Type      string
	Role      string
	Content   string
	Model     *string
	ToolCalls []*ToolCall
	CreatedAt time.Time
	UpdatedAt time.Time
	// AIResponseStatus is what the server said of the reply when the
	// message was sent; nil on messages read from a chat.
	AIResponseStatus *string
}

// ToolCall is a function call made by the assistant.
type ToolCall struct {
	ID                string
	FunctionName      string
	FunctionArguments JSON
	FunctionResult    *JSON
	CreatedAt         time.Time
}

// Import is an import from a show answer (Shown) or from the imports list
// (Shown nil: its configuration and full stats cost a lookup).
type Import struct {
	ID           string
	Type         string
	Status       string
	AccountID    *string
	Error        *string
	StatusDetail *ImportStatusDetail
	CreatedAt    time.Time
	UpdatedAt    time.Time
	// RowsCount is what the list sent of the stats (nil when it sent none).
	RowsCount *int
	// Shown is the show answer the import was mapped from, or nil.
	Shown *restclient.Import
}

// IsNode marks Import as a Relay Node.
func (Import) IsNode() {}

// IsNode marks Category as a Relay Node.
func (Category) IsNode() {}

// IsNode marks Chat as a Relay Node.
func (Chat) IsNode() {}
