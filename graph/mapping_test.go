package graph

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/suregql/suregql/graph/model"
	"github.com/suregql/suregql/restclient"
)

// show renders v for a failure message: pointers are followed, so two
// values that differ only in addresses print the same.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func ptr[T any](v T) *T { return &v }

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestCategoryFromREST(t *testing.T) {
	created, updated := ts("2025-12-17T15:00:01Z"), ts("2025-12-18T09:30:00Z")
	for _, tc := range []struct {
		name string
		in   restclient.Category
		want model.Category
	}{
		{
			name: "income root",
			in: restclient.Category{
				ID: "0b7c2a5e-0000-4000-8000-000000000001", Name: "Income", Classification: "income",
				Color: "#22c55e", Icon: "circle-dollar-sign", SubcategoriesCount: 3, CreatedAt: created, UpdatedAt: updated,
			},
			want: model.Category{
				ID: "0b7c2a5e-0000-4000-8000-000000000001", Name: "Income", Classification: ptr(model.CategoryClassificationIncome),
				Color: "#22c55e", Icon: "circle-dollar-sign", SubcategoriesCount: 3, CreatedAt: created, UpdatedAt: updated,
			},
		},
		{
			name: "expense subcategory keeps its parent's id and name",
			in: restclient.Category{
				ID: "0b7c2a5e-0000-4000-8000-000000000002", Name: "Coffee Shops", Classification: "expense",
				Color: "#f97316", Icon: "coffee", Parent: &restclient.CategoryRef{ID: "0b7c2a5e-0000-4000-8000-000000000003", Name: "Food & Drink"},
				CreatedAt: created, UpdatedAt: updated,
			},
			want: model.Category{
				ID: "0b7c2a5e-0000-4000-8000-000000000002", Name: "Coffee Shops", Classification: ptr(model.CategoryClassificationExpense),
				Color: "#f97316", Icon: "coffee", ParentID: "0b7c2a5e-0000-4000-8000-000000000003", ParentName: "Food & Drink",
				CreatedAt: created, UpdatedAt: updated,
			},
		},
		{
			name: "classification in another case",
			in:   restclient.Category{ID: "a", Classification: "INCOME"},
			want: model.Category{ID: "a", Classification: ptr(model.CategoryClassificationIncome)},
		},
		{
			// Never a guess: the schema knows income and expense only.
			name: "unknown classification is null",
			in:   restclient.Category{ID: "a", Classification: "transfer"},
			want: model.Category{ID: "a"},
		},
		{
			// Sure v0.6.9 and later send none.
			name: "missing classification is null",
			in:   restclient.Category{ID: "a"},
			want: model.Category{ID: "a"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := categoryFromREST(&tc.in)
			if got.Upstream != &tc.in {
				t.Errorf("Upstream = %p, want the answer mapped (%p): the planner plans with it", got.Upstream, &tc.in)
			}
			tc.want.Upstream = got.Upstream
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("got %s, want %s", show(got), show(tc.want))
			}
		})
	}
}

func TestClassificationToREST(t *testing.T) {
	for _, tc := range []struct {
		in   model.CategoryClassification
		want string
	}{
		{model.CategoryClassificationIncome, "income"},
		{model.CategoryClassificationExpense, "expense"},
	} {
		t.Run(string(tc.in), func(t *testing.T) {
			if got := classificationToREST(tc.in); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if back := classificationFromREST(classificationToREST(tc.in)); back == nil || *back != tc.in {
				t.Errorf("round trip: got %v, want %q", back, tc.in)
			}
		})
	}
}

// A list element's last_message_at is the chat's oldest message's time
// (UPSTREAM.md): it is firstMessageAt, and lastMessageAt too only when
// the chat holds one message.
func TestChatFromSummary(t *testing.T) {
	created, updated, oldest := ts("2025-12-20T10:00:00Z"), ts("2025-12-21T10:00:00Z"), ts("2025-12-20T10:01:00Z")
	for _, tc := range []struct {
		name string
		in   restclient.ChatSummary
		want model.Chat
	}{
		{
			name: "with messages: the newest not known",
			in: restclient.ChatSummary{
				ID: "c1", Title: "Budget", FirstMessageAt: &oldest, MessageCount: 6, CreatedAt: created, UpdatedAt: updated,
			},
			want: model.Chat{
				ID: "c1", Title: "Budget", MessageCount: 6, FirstMessageAt: &oldest, FirstMessageKnown: true,
				CreatedAt: created, UpdatedAt: updated,
			},
		},
		{
			name: "one message: the oldest is the newest",
			in: restclient.ChatSummary{
				ID: "c1", Title: "Budget", FirstMessageAt: &oldest, MessageCount: 1, CreatedAt: created, UpdatedAt: updated,
			},
			want: model.Chat{
				ID: "c1", Title: "Budget", MessageCount: 1, FirstMessageAt: &oldest, FirstMessageKnown: true,
				LastMessageAt: &oldest, LastMessageKnown: true, CreatedAt: created, UpdatedAt: updated,
			},
		},
		{
			name: "messages but no time sent: neither known",
			in:   restclient.ChatSummary{ID: "c1", Title: "Budget", MessageCount: 1, CreatedAt: created, UpdatedAt: updated},
			want: model.Chat{ID: "c1", Title: "Budget", MessageCount: 1, CreatedAt: created, UpdatedAt: updated},
		},
		{
			name: "with an error and no messages",
			in:   restclient.ChatSummary{ID: "c2", Title: "Net worth", Error: ptr("the model failed"), CreatedAt: created, UpdatedAt: updated},
			want: model.Chat{
				ID: "c2", Title: "Net worth", Error: ptr("the model failed"), LastMessageKnown: true, FirstMessageKnown: true,
				CreatedAt: created, UpdatedAt: updated,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := chatFromSummary(&tc.in)
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("got %s, want %s", show(got), show(tc.want))
			}
			if got.FirstPage != nil {
				t.Errorf("FirstPage = %s, want nil: a list element holds no messages", show(got.FirstPage))
			}
		})
	}
}

// messages returns n user messages a minute apart from start.
func messages(start time.Time, n int) []restclient.Message {
	out := make([]restclient.Message, n)
	for i := range out {
		at := start.Add(time.Duration(i) * time.Minute)
		out[i] = restclient.Message{ID: "m" + time.Duration(i).String(), Type: "user_message", Role: "user", Content: "q", CreatedAt: at, UpdatedAt: at}
	}
	return out
}

func TestChatFromShow(t *testing.T) {
	start := ts("2026-01-01T00:00:00Z")
	newest := func(ms []restclient.Message) *time.Time { return &ms[len(ms)-1].CreatedAt }
	oldest := func(ms []restclient.Message) *time.Time { return &ms[0].CreatedAt }
	page := func(page, perPage, total int) *restclient.Pagination {
		return &restclient.Pagination{Page: page, PerPage: perPage, TotalCount: total, TotalPages: max(1, (total+perPage-1)/perPage)}
	}
	three, fifty, twenty := messages(start, 3), messages(start, 50), messages(start, 20)
	for _, tc := range []struct {
		name      string
		msgs      []restclient.Message
		page      *restclient.Pagination
		wantCount int
		wantKnown bool
		wantLast  *time.Time
		wantPage  [3]int // page, per page, total of FirstPage
	}{
		{"one complete page", three, page(1, 50, 3), 3, true, newest(three), [3]int{1, 50, 3}},
		{"first of three pages", fifty, page(1, 50, 120), 120, false, nil, [3]int{1, 50, 120}},
		{"middle page", fifty, page(2, 50, 120), 120, false, nil, [3]int{2, 50, 120}},
		{"last page (also what an overflow answers)", twenty, page(3, 50, 120), 120, true, newest(twenty), [3]int{3, 50, 120}},
		{"exactly full last page", fifty, page(1, 50, 50), 50, true, newest(fifty), [3]int{1, 50, 50}},
		{"empty chat", nil, page(1, 50, 0), 0, true, nil, [3]int{1, 50, 0}},
		{"empty page past the end of a chat with messages", nil, page(5, 50, 120), 120, false, nil, [3]int{5, 50, 120}},
		{"no pagination block: one complete page", three, nil, 3, true, newest(three), [3]int{1, 50, 3}},
		{"no pagination block, no messages", nil, nil, 0, true, nil, [3]int{1, 50, 0}},
		{"server reports another page size", twenty, page(2, 20, 40), 40, true, newest(twenty), [3]int{2, 20, 40}},
		{"per_page missing: 50 assumed", fifty, &restclient.Pagination{Page: 1, TotalCount: 60}, 60, false, nil, [3]int{1, 50, 60}},
		{"page 0 reported: page 1", three, &restclient.Pagination{Page: 0, PerPage: 50, TotalCount: 3}, 3, true, newest(three), [3]int{1, 50, 3}},
		{"total_count below the messages held", three, page(1, 50, 1), 3, true, newest(three), [3]int{1, 50, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := restclient.Chat{
				ID: "c1", Title: "A year", Error: ptr("boom"), CreatedAt: start, UpdatedAt: start.Add(time.Hour),
				Messages: tc.msgs, Pagination: tc.page,
			}
			got := chatFromShow(&in, in.MessagePage(restclient.LegacyMessagesPerPage))
			if got.ID != "c1" || got.Title != "A year" || got.Error == nil || *got.Error != "boom" ||
				!got.CreatedAt.Equal(start) || !got.UpdatedAt.Equal(start.Add(time.Hour)) {
				t.Errorf("chat fields: got %s, want those of the answer", show(got))
			}
			if got.MessageCount != tc.wantCount {
				t.Errorf("MessageCount = %d, want %d", got.MessageCount, tc.wantCount)
			}
			if got.LastMessageKnown != tc.wantKnown {
				t.Errorf("LastMessageKnown = %t, want %t", got.LastMessageKnown, tc.wantKnown)
			}
			if !reflect.DeepEqual(got.LastMessageAt, tc.wantLast) {
				t.Errorf("LastMessageAt = %s, want %s", show(got.LastMessageAt), show(tc.wantLast))
			}
			// The oldest is known from page 1 (its first message), or an
			// empty chat.
			wantFirstKnown := tc.wantPage[0] == 1 && (len(tc.msgs) > 0 || tc.wantCount == 0)
			var wantFirst *time.Time
			if wantFirstKnown && len(tc.msgs) > 0 {
				wantFirst = oldest(tc.msgs)
			}
			if got.FirstMessageKnown != wantFirstKnown || !reflect.DeepEqual(got.FirstMessageAt, wantFirst) {
				t.Errorf("FirstMessageAt = %s (known %t), want %s (known %t)", show(got.FirstMessageAt), got.FirstMessageKnown, show(wantFirst), wantFirstKnown)
			}
			if got.FirstPage == nil {
				t.Fatal("FirstPage = nil, want the answer's page")
			}
			if p := got.FirstPage; [3]int{p.Page, p.PerPage, p.Total} != tc.wantPage {
				t.Errorf("FirstPage (page, per page, total) = %v, want %v", [3]int{p.Page, p.PerPage, p.Total}, tc.wantPage)
			}
			if n := len(got.FirstPage.Messages); n != len(tc.msgs) {
				t.Errorf("FirstPage holds %d messages, want %d", n, len(tc.msgs))
			}
		})
	}
}

// mappedPage is a chat answer's page of messages as GraphQL serves it.
type mappedPage struct {
	Page, PerPage, Total int
	Messages             []*model.Message
}

func TestMessagePageFromREST(t *testing.T) {
	at := ts("2026-01-12T17:20:05Z")
	args := json.RawMessage(`{"page":1}`)
	assistant := restclient.Message{
		ID: "m2", Type: "assistant_message", Role: "assistant", Content: "Here", Model: ptr("gpt-4.1"),
		ToolCalls: []restclient.ToolCall{{ID: "t1", FunctionName: "get_accounts", FunctionArguments: args, CreatedAt: at}},
		CreatedAt: at, UpdatedAt: at.Add(time.Second),
	}
	user := restclient.Message{ID: "m1", Type: "user_message", Role: "user", Content: "Hi", CreatedAt: at, UpdatedAt: at}
	for _, tc := range []struct {
		name string
		in   restclient.Chat
		want mappedPage
	}{
		{
			name: "messages in order, with model and tool calls",
			in:   restclient.Chat{Messages: []restclient.Message{user, assistant}, Pagination: &restclient.Pagination{Page: 1, PerPage: 50, TotalCount: 2, TotalPages: 1}},
			want: mappedPage{Page: 1, PerPage: 50, Total: 2, Messages: []*model.Message{
				{ID: "m1", Type: "user_message", Role: "user", Content: "Hi", ToolCalls: []*model.ToolCall{}, CreatedAt: at, UpdatedAt: at},
				{
					ID: "m2", Type: "assistant_message", Role: "assistant", Content: "Here", Model: ptr("gpt-4.1"),
					ToolCalls: []*model.ToolCall{{ID: "t1", FunctionName: "get_accounts", FunctionArguments: model.JSON(args), CreatedAt: at}},
					CreatedAt: at, UpdatedAt: at.Add(time.Second),
				},
			}},
		},
		{
			name: "no pagination block",
			in:   restclient.Chat{Messages: []restclient.Message{user}},
			want: mappedPage{Page: 1, PerPage: restclient.MessagesPerPage, Total: 1, Messages: []*model.Message{
				{ID: "m1", Type: "user_message", Role: "user", Content: "Hi", ToolCalls: []*model.ToolCall{}, CreatedAt: at, UpdatedAt: at},
			}},
		},
		{
			name: "no messages is an empty list",
			in:   restclient.Chat{Pagination: &restclient.Pagination{Page: 1, PerPage: 50, TotalCount: 0, TotalPages: 1}},
			want: mappedPage{Page: 1, PerPage: 50, Total: 0, Messages: []*model.Message{}},
		},
		{
			name: "overflow page as the server reported it",
			in:   restclient.Chat{Messages: []restclient.Message{user}, Pagination: &restclient.Pagination{Page: 3, PerPage: 50, TotalCount: 101, TotalPages: 3}},
			want: mappedPage{Page: 3, PerPage: 50, Total: 101, Messages: []*model.Message{
				{ID: "m1", Type: "user_message", Role: "user", Content: "Hi", ToolCalls: []*model.ToolCall{}, CreatedAt: at, UpdatedAt: at},
			}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.in.MessagePage(restclient.MessagesPerPage)
			got := mappedPage{Page: p.Page, PerPage: p.PerPage, Total: p.Total, Messages: make([]*model.Message, len(p.Messages))}
			for i := range p.Messages {
				got.Messages[i] = messageFromREST(&p.Messages[i])
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %s, want %s", show(got), show(tc.want))
			}
			// Non-null GraphQL lists: never nil.
			if got.Messages == nil {
				t.Error("Messages = nil, want an empty list")
			}
			for _, m := range got.Messages {
				if m.ToolCalls == nil {
					t.Errorf("message %s: ToolCalls = nil, want an empty list", m.ID)
				}
			}
		})
	}
}

func TestToolCallFromREST(t *testing.T) {
	at := ts("2026-01-12T17:20:05Z")
	for _, tc := range []struct {
		name       string
		args, res  string // as the upstream sent them; "" is absent
		wantArgs   string
		wantResult *string
	}{
		{"object arguments and result", `{"page":1,"order":"desc"}`, `{"total_results":2}`, `{"page":1,"order":"desc"}`, ptr(`{"total_results":2}`)},
		{"absent arguments are an empty object", "", `[]`, `{}`, ptr(`[]`)},
		{"empty object arguments", `{}`, "", `{}`, nil},
		{"null result is none", `{}`, `null`, `{}`, nil},
		{"absent result is none", `{}`, "", `{}`, nil},
		{"scalar results are kept", `{}`, `false`, `{}`, ptr(`false`)},
		{"string result is kept", `{}`, `"done"`, `{}`, ptr(`"done"`)},
		{"zero result is kept", `{}`, `0`, `{}`, ptr(`0`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := restclient.ToolCall{ID: "t1", FunctionName: "get_transactions", CreatedAt: at}
			if tc.args != "" {
				in.FunctionArguments = json.RawMessage(tc.args)
			}
			if tc.res != "" {
				in.FunctionResult = json.RawMessage(tc.res)
			}
			got := toolCallFromREST(in)
			if got.ID != "t1" || got.FunctionName != "get_transactions" || !got.CreatedAt.Equal(at) {
				t.Errorf("got %s, want the call's id, name and time", show(got))
			}
			if string(got.FunctionArguments) != tc.wantArgs {
				t.Errorf("FunctionArguments = %s, want %s", got.FunctionArguments, tc.wantArgs)
			}
			switch {
			case tc.wantResult == nil && got.FunctionResult != nil:
				t.Errorf("FunctionResult = %s, want nil", *got.FunctionResult)
			case tc.wantResult != nil && got.FunctionResult == nil:
				t.Errorf("FunctionResult = nil, want %s", *tc.wantResult)
			case tc.wantResult != nil && string(*got.FunctionResult) != *tc.wantResult:
				t.Errorf("FunctionResult = %s, want %s", *got.FunctionResult, *tc.wantResult)
			}
		})
	}
}

// TestToolCallFromREST_FromTheWire: functionArguments is JSON! in the
// schema, so a null or absent "function_arguments", as decoded by
// restclient, must become {}; a null result must become none.
func TestToolCallFromREST_FromTheWire(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		wantArgs   string
		wantResult string // "" is none
	}{
		{"null arguments and result", `{"id":"t1","function_arguments":null,"function_result":null}`, `{}`, ""},
		{"absent arguments and result", `{"id":"t1"}`, `{}`, ""},
		{"object arguments, array result", `{"id":"t1","function_arguments":{"a":[1,2]},"function_result":[{"b":null}]}`, `{"a":[1,2]}`, `[{"b":null}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in restclient.ToolCall
			if err := json.Unmarshal([]byte(tc.body), &in); err != nil {
				t.Fatal(err)
			}
			got := toolCallFromREST(in)
			if string(got.FunctionArguments) != tc.wantArgs {
				t.Errorf("FunctionArguments = %s, want %s", got.FunctionArguments, tc.wantArgs)
			}
			var result string
			if got.FunctionResult != nil {
				result = string(*got.FunctionResult)
			}
			if result != tc.wantResult {
				t.Errorf("FunctionResult = %q, want %q", result, tc.wantResult)
			}
		})
	}
}

func TestImportFromREST(t *testing.T) {
	created, updated := ts("2026-01-10T11:39:18.123Z"), ts("2026-01-10T11:39:22.481Z")
	for _, tc := range []struct {
		name   string
		in     restclient.Import
		want   model.Import // Shown and RowsCount are checked apart
		config model.ImportConfiguration
		stats  model.ImportStats
	}{
		{
			name: "complete import, every column mapped, today's stats and detail",
			in: restclient.Import{
				ID: "i1", Type: "TransactionImport", Status: "complete", AccountID: ptr("acc"),
				Configuration: restclient.ImportConfiguration{
					DateColLabel: ptr("Date"), AmountColLabel: ptr("Amount"), NameColLabel: ptr("Name"),
					CategoryColLabel: ptr("Category"), TagsColLabel: ptr("Tags"), NotesColLabel: ptr("Notes"),
					AccountColLabel: ptr("Account"), DateFormat: ptr("%Y-%m-%d"), NumberFormat: ptr("1,234.56"),
					SignageConvention: ptr("inflows_positive"),
				},
				Stats: restclient.ImportStats{
					RowsCount: 120, ValidRowsCount: ptr(120), InvalidRowsCount: ptr(0), MappingsCount: ptr(7), UnassignedMappingsCount: ptr(1),
				},
				StatusDetail: &restclient.ImportStatusDetail{Uploaded: ptr(true), Terminal: ptr(true), Revertable: ptr(false)},
				CreatedAt:    created, UpdatedAt: updated,
			},
			want: model.Import{
				ID: "i1", Type: "TransactionImport", Status: "complete", AccountID: ptr("acc"),
				StatusDetail: &model.ImportStatusDetail{Uploaded: ptr(true), Terminal: ptr(true), Revertable: ptr(false)},
				CreatedAt:    created, UpdatedAt: updated,
			},
			config: model.ImportConfiguration{
				DateColLabel: ptr("Date"), AmountColLabel: ptr("Amount"), NameColLabel: ptr("Name"),
				CategoryColLabel: ptr("Category"), TagsColLabel: ptr("Tags"), NotesColLabel: ptr("Notes"),
				AccountColLabel: ptr("Account"), DateFormat: ptr("%Y-%m-%d"), NumberFormat: ptr("1,234.56"),
				SignageConvention: ptr("inflows_positive"),
			},
			stats: model.ImportStats{RowsCount: 120, ValidRowsCount: ptr(120), InvalidRowsCount: ptr(0), MappingsCount: ptr(7), UnassignedMappingsCount: ptr(1)},
		},
		{
			name: "failed import of an older server: no detail, older stats",
			in: restclient.Import{
				ID: "i2", Type: "TradeImport", Status: "failed", Error: ptr("Row 14: Price can't be blank"),
				Configuration: restclient.ImportConfiguration{NumberFormat: ptr("1.234,56")},
				Stats:         restclient.ImportStats{RowsCount: 42, ValidRowsCount: ptr(39)},
				CreatedAt:     created, UpdatedAt: updated,
			},
			want: model.Import{
				ID: "i2", Type: "TradeImport", Status: "failed", Error: ptr("Row 14: Price can't be blank"),
				CreatedAt: created, UpdatedAt: updated,
			},
			config: model.ImportConfiguration{NumberFormat: ptr("1.234,56")},
			stats:  model.ImportStats{RowsCount: 42, ValidRowsCount: ptr(39)},
		},
		{
			name: "pending import: nulls stay null",
			in:   restclient.Import{ID: "i3", Type: "PdfImport", Status: "pending"},
			want: model.Import{ID: "i3", Type: "PdfImport", Status: "pending"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := importFromREST(&tc.in)
			if got.Shown != &tc.in || got.RowsCount == nil || *got.RowsCount != tc.in.Stats.RowsCount {
				t.Errorf("Shown = %p, RowsCount = %v: want the answer mapped and its row count", got.Shown, got.RowsCount)
			}
			got.Shown, got.RowsCount = nil, nil
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("got %s, want %s", show(got), show(tc.want))
			}
			if c := importConfigurationFromREST(tc.in.Configuration); !reflect.DeepEqual(*c, tc.config) {
				t.Errorf("configuration = %s, want %s", show(c), show(tc.config))
			}
			if st := importStatsFromREST(tc.in.Stats); !reflect.DeepEqual(*st, tc.stats) {
				t.Errorf("stats = %s, want %s", show(st), show(tc.stats))
			}
		})
	}
}
