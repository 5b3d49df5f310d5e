package graph

import (
	"strings"

	"suregql/graph/model"
	"suregql/planner"
	"suregql/restclient"
)

// categoryFromREST maps an upstream category. An unknown classification
// (the upstream knows only income and expense) maps to EXPENSE rather than
// failing the whole list.
func categoryFromREST(c *restclient.Category) *model.Category {
	m := &model.Category{
		ID:                 c.ID,
		Name:               c.Name,
		Classification:     classificationFromREST(c.Classification),
		Color:              c.Color,
		Icon:               c.Icon,
		SubcategoriesCount: c.SubcategoriesCount,
		CreatedAt:          c.CreatedAt,
		UpdatedAt:          c.UpdatedAt,
		Upstream:           c,
	}
	if c.Parent != nil {
		m.ParentID, m.ParentName = c.Parent.ID, c.Parent.Name
	}
	return m
}

func classificationFromREST(s string) model.CategoryClassification {
	if strings.EqualFold(s, "income") {
		return model.CategoryClassificationIncome
	}
	return model.CategoryClassificationExpense
}

func classificationToREST(c model.CategoryClassification) string {
	return strings.ToLower(string(c))
}

// chatFromSummary maps an element of the chat list: it knows the message
// count and the last message time, but holds no messages.
func chatFromSummary(c *restclient.ChatSummary) *model.Chat {
	return &model.Chat{
		ID:            c.ID,
		Title:         c.Title,
		Error:         c.Error,
		CreatedAt:     c.CreatedAt,
		UpdatedAt:     c.UpdatedAt,
		MessageCount:  c.MessageCount,
		LastMessageAt: c.LastMessageAt,
		// Absent with messages present is not "no message": the resolver
		// then reads the newest one.
		LastMessageKnown: c.LastMessageAt != nil || c.MessageCount == 0,
	}
}

// chatFromShow maps a show, create or update answer: it holds one page of
// messages (the first, for create and update) and their count.
func chatFromShow(c *restclient.Chat) *model.Chat {
	m := &model.Chat{
		ID:        c.ID,
		Title:     c.Title,
		Error:     c.Error,
		CreatedAt: c.CreatedAt,
		UpdatedAt: c.UpdatedAt,
	}
	page := c.MessagePage()
	m.FirstPage = &page
	m.MessageCount = page.Total
	// The newest message is on the last page; when this page holds it,
	// lastMessageAt is known without another call.
	if page.HoldsNewest() {
		m.LastMessageKnown = true
		if n := len(page.Messages); n > 0 {
			t := page.Messages[n-1].CreatedAt
			m.LastMessageAt = &t
		}
	}
	return m
}

// chatRef is what the planner needs of a chat to read its messages.
func chatRef(c *model.Chat) planner.ChatRef {
	return planner.ChatRef{ID: c.ID, MessageCount: c.MessageCount, Shown: c.FirstPage}
}

func messageFromREST(m *restclient.Message) *model.Message {
	out := &model.Message{
		ID:        m.ID,
		Type:      m.Type,
		Role:      m.Role,
		Content:   m.Content,
		Model:     m.Model,
		ToolCalls: make([]*model.ToolCall, len(m.ToolCalls)),
		CreatedAt: m.CreatedAt,
		UpdatedAt: m.UpdatedAt,
	}
	for i, tc := range m.ToolCalls {
		out.ToolCalls[i] = toolCallFromREST(tc)
	}
	return out
}

func toolCallFromREST(tc restclient.ToolCall) *model.ToolCall {
	out := &model.ToolCall{
		ID:                tc.ID,
		FunctionName:      tc.FunctionName,
		FunctionArguments: model.JSON(tc.FunctionArguments),
		CreatedAt:         tc.CreatedAt,
	}
	if len(out.FunctionArguments) == 0 {
		// functionArguments is non-null: an absent object is an empty one.
		out.FunctionArguments = model.JSON("{}")
	}
	if r := tc.FunctionResult; len(r) > 0 && string(r) != "null" {
		j := model.JSON(r)
		out.FunctionResult = &j
	}
	return out
}

func importFromREST(i *restclient.Import) *model.Import {
	c := i.Configuration
	return &model.Import{
		ID:        i.ID,
		Type:      i.Type,
		Status:    i.Status,
		AccountID: i.AccountID,
		Error:     i.Error,
		Configuration: &model.ImportConfiguration{
			DateColLabel:      c.DateColLabel,
			AmountColLabel:    c.AmountColLabel,
			NameColLabel:      c.NameColLabel,
			CategoryColLabel:  c.CategoryColLabel,
			TagsColLabel:      c.TagsColLabel,
			NotesColLabel:     c.NotesColLabel,
			AccountColLabel:   c.AccountColLabel,
			DateFormat:        c.DateFormat,
			NumberFormat:      c.NumberFormat,
			SignageConvention: c.SignageConvention,
		},
		Stats:     &model.ImportStats{RowsCount: i.Stats.RowsCount, ValidRowsCount: i.Stats.ValidRowsCount},
		CreatedAt: i.CreatedAt,
		UpdatedAt: i.UpdatedAt,
	}
}
