package graph

import (
	"strings"

	"github.com/suregql/suregql/graph/model"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/restclient"
)

// categoryFromREST maps an upstream category. A classification the
// upstream did not send (Sure v0.6.9 and later) or that the schema does
// not know is null: never a guess.
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

func classificationFromREST(s string) *model.CategoryClassification {
	var c model.CategoryClassification
	switch {
	case strings.EqualFold(s, "income"):
		c = model.CategoryClassificationIncome
	case strings.EqualFold(s, "expense"):
		c = model.CategoryClassificationExpense
	default:
		return nil
	}
	return &c
}

func classificationToREST(c model.CategoryClassification) string {
	return strings.ToLower(string(c))
}

// chatFromSummary maps an element of the chat list: it knows the message
// count and the oldest message's time (Sure's last_message_at), but holds
// no messages. The newest message's time is known from it only when the
// chat has none, or one (the oldest is then the newest).
func chatFromSummary(c *restclient.ChatSummary) *model.Chat {
	m := &model.Chat{
		ID:             c.ID,
		Title:          c.Title,
		Error:          c.Error,
		CreatedAt:      c.CreatedAt,
		UpdatedAt:      c.UpdatedAt,
		MessageCount:   c.MessageCount,
		FirstMessageAt: c.FirstMessageAt,
		// Absent with messages present is not "no message": the resolver
		// then reads the oldest one.
		FirstMessageKnown: c.FirstMessageAt != nil || c.MessageCount == 0,
	}
	switch {
	case c.MessageCount == 0:
		m.LastMessageKnown = true
	case c.MessageCount == 1 && c.FirstMessageAt != nil:
		m.LastMessageAt, m.LastMessageKnown = c.FirstMessageAt, true
	}
	return m
}

// chatFromShow maps a show answer (or a create or update answer that
// shows messages: before v0.7.x): it holds one page of messages (the
// first, for create and update) and their count: page, as
// planner.MessagePage reads it.
func chatFromShow(c *restclient.Chat, page restclient.MessagePage) *model.Chat {
	m := &model.Chat{
		ID:        c.ID,
		Title:     c.Title,
		Error:     c.Error,
		CreatedAt: c.CreatedAt,
		UpdatedAt: c.UpdatedAt,
	}
	m.FirstPage = &page
	m.MessageCount = page.Total
	// The newest message is on the last page, the oldest on the first;
	// when this page holds one, its time is known without another call.
	if page.HoldsNewest() {
		m.LastMessageKnown = true
		if n := len(page.Messages); n > 0 {
			t := page.Messages[n-1].CreatedAt
			m.LastMessageAt = &t
		}
	}
	if page.HoldsOldest() {
		m.FirstMessageKnown = true
		if len(page.Messages) > 0 {
			t := page.Messages[0].CreatedAt
			m.FirstMessageAt = &t
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

		AIResponseStatus: m.AIResponseStatus,
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
	rows := i.Stats.RowsCount
	return &model.Import{
		ID:           i.ID,
		Type:         i.Type,
		Status:       i.Status,
		AccountID:    i.AccountID,
		Error:        i.Error,
		StatusDetail: statusDetailFromREST(i.StatusDetail),
		CreatedAt:    i.CreatedAt,
		UpdatedAt:    i.UpdatedAt,
		RowsCount:    &rows,
		Shown:        i,
	}
}

// importFromSummary maps an import of the list: its configuration and
// stats (but the row count) are looked up when read.
func importFromSummary(i *restclient.ImportSummary) *model.Import {
	return &model.Import{
		ID:           i.ID,
		Type:         i.Type,
		Status:       i.Status,
		AccountID:    i.AccountID,
		Error:        i.Error,
		StatusDetail: statusDetailFromREST(i.StatusDetail),
		CreatedAt:    i.CreatedAt,
		UpdatedAt:    i.UpdatedAt,
		RowsCount:    i.RowsCount,
	}
}

func statusDetailFromREST(d *restclient.ImportStatusDetail) *model.ImportStatusDetail {
	if d == nil {
		return nil
	}
	return &model.ImportStatusDetail{
		Uploaded: d.Uploaded, Configured: d.Configured, Terminal: d.Terminal,
		Cleaned: d.Cleaned, Publishable: d.Publishable, Revertable: d.Revertable,
	}
}

func importConfigurationFromREST(c restclient.ImportConfiguration) *model.ImportConfiguration {
	return &model.ImportConfiguration{
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
	}
}

func importStatsFromREST(s restclient.ImportStats) *model.ImportStats {
	return &model.ImportStats{
		RowsCount:               s.RowsCount,
		ValidRowsCount:          s.ValidRowsCount,
		InvalidRowsCount:        s.InvalidRowsCount,
		MappingsCount:           s.MappingsCount,
		UnassignedMappingsCount: s.UnassignedMappingsCount,
	}
}

// rateLimitFromREST maps a reading of the upstream's rate-limit headers:
// what the server did not send (an unlimited server's numbers, a missing
// header, a reset a 429 did not give) is null.
func rateLimitFromREST(rl *restclient.RateLimit) *model.RateLimit {
	out := &model.RateLimit{Unlimited: rl.Unlimited}
	out.Limit, out.Remaining, out.ResetAt = rl.Sent()
	if out.Limit != nil && out.Remaining != nil {
		used := max(*out.Limit-*out.Remaining, 0)
		out.Used = &used
	}
	return out
}
