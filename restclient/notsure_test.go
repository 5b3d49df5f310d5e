package restclient

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Answers of 2xx that are not Sure's: every endpoint refuses, as a
// not_sure *UnavailableError carrying the answer's status, a body without
// the keys it always sends or with a value it can never send, and accepts
// every shape a Sure of 0.6.x to 0.7.x sends (UPSTREAM.md "Versions").

// isNotSure reports whether err is an *UnavailableError of reason not_sure.
func isNotSure(err error) bool {
	var ue *UnavailableError
	return errors.As(err, &ue) && ue.NotSure && ue.Reason() == ReasonNotSure
}

// pag is a pagy block: page, per_page, total_count, total_pages as JSON
// values ("null", "1"…), "" leaving the member out.
func pag(page, perPage, total, pages string) string {
	var members []string
	for _, m := range [][2]string{{"page", page}, {"per_page", perPage}, {"total_count", total}, {"total_pages", pages}} {
		if m[1] != "" {
			members = append(members, `"`+m[0]+`":`+m[1])
		}
	}
	return "{" + strings.Join(members, ",") + "}"
}

// meta is the "meta" block of GET /imports: current_page, per_page,
// total_count, total_pages ("" leaves the member out).
func meta(page, perPage, total, pages string) string {
	members := []string{`"next_page":null`, `"prev_page":null`}
	for _, m := range [][2]string{{"current_page", page}, {"per_page", perPage}, {"total_count", total}, {"total_pages", pages}} {
		if m[1] != "" {
			members = append(members, `"`+m[0]+`":`+m[1])
		}
	}
	return "{" + strings.Join(members, ",") + "}"
}

const (
	chatSummaryJSON = `{"id":"` + chatID + `","title":"Budget review","last_message_at":null,"message_count":2,"error":null,
		"created_at":"2026-01-10T11:39:18Z","updated_at":"2026-01-10T11:40:00Z"}`
	importSummaryJSON = `{"id":"` + importID + `","type":"TransactionImport","status":"complete","account_id":null,"rows_count":3,
		"created_at":"2026-01-10T11:39:18.123Z","updated_at":"2026-01-10T11:39:19.456Z"}`
	importJSON = `{"id":"` + importID + `","type":"TransactionImport","status":"pending","account_id":null,
		"configuration":{"date_col_label":null},"stats":{"rows_count":3,"valid_rows_count":3},
		"created_at":"2026-01-10T11:39:18.123Z","updated_at":"2026-01-10T11:39:19.456Z"}`
	messageJSON = `{"id":"m9","type":"user_message","role":"user","content":"And in December?","chat_id":"` + chatID + `",
		"ai_response_status":"pending","ai_response_message":null,"created_at":"2026-01-10T11:41:00Z","updated_at":"2026-01-10T11:41:00Z"}`
)

func categoriesBody(items []string, pagination string) string {
	return `{"categories":[` + strings.Join(items, ",") + `],"pagination":` + pagination + `}`
}

func chatsBody(items []string, pagination string) string {
	return `{"chats":[` + strings.Join(items, ",") + `],"pagination":` + pagination + `}`
}

func importsBody(items []string, m string) string {
	return `{"data":[` + strings.Join(items, ",") + `],"meta":` + m + `}`
}

// chatShow is a chat answer with messages (JSON objects) and a pagination
// block ("" for none).
func chatShow(messages []string, pagination string) string {
	s := `{"id":"` + chatID + `","title":"Budget review","error":null,"created_at":"2026-01-10T11:39:18Z",
		"updated_at":"2026-01-10T11:40:00Z","messages":[` + strings.Join(messages, ",") + `]`
	if pagination != "" {
		s += `,"pagination":` + pagination
	}
	return s + "}"
}

var (
	one       = []string{categoryJSON}
	two       = []string{categoryJSON, rootCategoryJSON}
	oneChat   = []string{chatSummaryJSON}
	oneImport = []string{importSummaryJSON}
	msgs      = []string{`{"id":"m1","type":"user_message","role":"user","content":"Hi"}`, `{"id":"m2","type":"assistant_message","role":"assistant","content":"Hello"}`}
)

// shapeCase is an answer of 2xx and whether Sure could have sent it.
type shapeCase struct {
	name string
	body string
	ok   bool
}

// answerCases lists, per endpoint, the call and the answers it is given.
var answerCases = []struct {
	endpoint string
	status   int
	call     func(context.Context, *Client) error
	cases    []shapeCase
}{
	{"GET /categories", http.StatusOK, func(ctx context.Context, c *Client) error {
		_, err := c.ListCategories(ctx, ListCategoriesOptions{Page: 1, PerPage: 25})
		return err
	}, []shapeCase{
		{"a page", categoriesBody(two, pag("1", "25", "2", "1")), true},
		{"no category", categoriesBody(nil, pag("1", "25", "0", "1")), true},
		{"an empty page past the end (pagy's :empty_page)", categoriesBody(nil, pag("3", "25", "2", "1")), true},
		{"unknown members", `{"categories":[` + categoryJSON + `],"pagination":{"page":1,"per_page":25,"total_count":1,"total_pages":1,"next":null},"meta":{"x":1}}`, true},
		{"classification absent (v0.6.9)", categoriesBody([]string{strings.Replace(categoryJSON, `"classification":"expense",`, "", 1)}, pag("1", "25", "1", "1")), true},
		{"hello world", `{"hello":"world"}`, false},
		{"an empty object", `{}`, false},
		{"no pagination", `{"categories":[` + categoryJSON + `]}`, false},
		{"no categories", `{"pagination":` + pag("1", "25", "0", "1") + `}`, false},
		{"categories null", `{"categories":null,"pagination":` + pag("1", "25", "0", "1") + `}`, false},
		{"an empty pagination", categoriesBody(one, `{}`), false},
		{"a negative total_count", categoriesBody(nil, pag("1", "25", "-7", "1")), false},
		{"page 0", categoriesBody(one, pag("0", "25", "1", "1")), false},
		{"no page", categoriesBody(one, pag("", "25", "1", "1")), false},
		{"a negative page", categoriesBody(one, pag("-1", "25", "1", "1")), false},
		{"a page past total_pages with items", categoriesBody(one, pag("3", "25", "1", "1")), false},
		{"total_pages 0", categoriesBody(nil, pag("1", "25", "0", "0")), false},
		{"no total_pages", categoriesBody(one, pag("1", "25", "1", "")), false},
		{"a negative per_page", categoriesBody(one, pag("1", "-25", "1", "1")), false},
		{"more items than per_page", categoriesBody(two, pag("1", "1", "2", "2")), false},
		{"a category without an id", categoriesBody([]string{`{"name":"Groceries"}`}, pag("1", "25", "1", "1")), false},
		{"a negative subcategories_count", categoriesBody([]string{strings.Replace(rootCategoryJSON, `"subcategories_count":3`, `"subcategories_count":-3`, 1)}, pag("1", "25", "1", "1")), false},
		{"a list", `[` + categoryJSON + `]`, false},
	}},
	{"GET /categories/{id}", http.StatusOK, func(ctx context.Context, c *Client) error {
		_, err := c.GetCategory(ctx, catID)
		return err
	}, []shapeCase{
		{"a category", categoryJSON, true},
		{"a root", rootCategoryJSON, true},
		{"hello world", `{"hello":"world"}`, false},
		{"no id", strings.Replace(categoryJSON, `"id":"`+catID+`",`, "", 1), false},
		{"an empty id", strings.Replace(categoryJSON, `"id":"`+catID+`"`, `"id":""`, 1), false},
		{"a negative subcategories_count", strings.Replace(rootCategoryJSON, `"subcategories_count":3`, `"subcategories_count":-1`, 1), false},
		{"a page of categories", categoriesBody(one, pag("1", "25", "1", "1")), false},
	}},
	{"GET /chats", http.StatusOK, func(ctx context.Context, c *Client) error {
		_, err := c.ListChats(ctx, 1)
		return err
	}, []shapeCase{
		{"a page of today (per_page null)", chatsBody(oneChat, pag("1", "null", "1", "1")), true},
		{"a legacy page (per_page 20)", chatsBody(oneChat, pag("1", "20", "1", "1")), true},
		{"no per_page", chatsBody(oneChat, pag("1", "", "1", "1")), true},
		{"no chat", chatsBody(nil, pag("1", "null", "0", "1")), true},
		{"null and absent last_message_at and error", chatsBody([]string{`{"id":"c1","title":"t","message_count":0,"error":null,"created_at":"2026-01-10T11:39:18Z","updated_at":"2026-01-10T11:39:18Z"}`}, pag("1", "null", "1", "1")), true},
		{"an empty page past the end", chatsBody(nil, pag("14", "null", "250", "13")), true},
		{"hello world", `{"hello":"world"}`, false},
		{"no pagination", `{"chats":[` + chatSummaryJSON + `]}`, false},
		{"no chats", `{"pagination":` + pag("1", "null", "0", "1") + `}`, false},
		{"a page of categories", categoriesBody(one, pag("1", "25", "1", "1")), false},
		{"a negative total_count", chatsBody(nil, pag("1", "null", "-7", "1")), false},
		{"page 0", chatsBody(oneChat, pag("0", "null", "1", "1")), false},
		{"a page past total_pages with items", chatsBody(oneChat, pag("2", "null", "1", "1")), false},
		{"total_pages 0", chatsBody(nil, pag("1", "null", "0", "0")), false},
		{"more items than per_page", chatsBody([]string{chatSummaryJSON, chatSummaryJSON}, pag("1", "1", "2", "2")), false},
		{"a chat without an id", chatsBody([]string{`{"title":"t"}`}, pag("1", "null", "1", "1")), false},
		{"a negative message_count", chatsBody([]string{strings.Replace(chatSummaryJSON, `"message_count":2`, `"message_count":-2`, 1)}, pag("1", "null", "1", "1")), false},
	}},
	{"GET /chats/{id}", http.StatusOK, func(ctx context.Context, c *Client) error {
		_, err := c.GetChat(ctx, chatID, 1)
		return err
	}, []shapeCase{
		{"a legacy chat (per_page 50)", chatJSON, true},
		{"a chat of today (per_page null)", chatShow(msgs, pag("1", "null", "2", "1")), true},
		{"no pagination", chatShow(msgs, ""), true},
		{"no message", chatShow(nil, pag("1", "null", "0", "1")), true},
		{"an empty page past the end", chatShow(nil, pag("4", "null", "2", "1")), true},
		{"error absent", strings.Replace(chatJSON, `"error":null,`, "", 1), true},
		{"hello world", `{"hello":"world"}`, false},
		{"no id", strings.Replace(chatJSON, `"id":"`+chatID+`",`, "", 1), false},
		{"a page of chats", chatsBody(oneChat, pag("1", "null", "1", "1")), false},
		{"a negative total_count", chatShow(nil, pag("1", "null", "-7", "1")), false},
		{"page 0", chatShow(msgs, pag("0", "null", "2", "1")), false},
		{"a page past total_pages with messages", chatShow(msgs, pag("2", "null", "2", "1")), false},
		{"total_pages 0", chatShow(nil, pag("1", "null", "0", "0")), false},
		{"an empty pagination", chatShow(msgs, `{}`), false},
		{"more messages than per_page", chatShow(msgs, pag("1", "1", "2", "2")), false},
		{"a message without an id", chatShow([]string{`{"role":"user","content":"Hi"}`}, pag("1", "null", "1", "1")), false},
	}},
	{"GET /imports", http.StatusOK, func(ctx context.Context, c *Client) error {
		_, err := Imports.List(ctx, c, ListOptions{})
		return err
	}, []shapeCase{
		{"a page", importsBody(oneImport, meta("1", "25", "1", "1")), true},
		{"no import", importsBody(nil, meta("1", "25", "0", "1")), true},
		{"rows_count null", importsBody([]string{strings.Replace(importSummaryJSON, `"rows_count":3`, `"rows_count":null`, 1)}, meta("1", "25", "1", "1")), true},
		{"hello world", `{"hello":"world"}`, false},
		{"no meta", `{"data":[` + importSummaryJSON + `]}`, false},
		{"pagy's pagination instead of meta", `{"data":[` + importSummaryJSON + `],"pagination":` + pag("1", "25", "1", "1") + `}`, false},
		{"no data", `{"meta":` + meta("1", "25", "0", "1") + `}`, false},
		{"data an object", `{"data":` + importJSON + `,"meta":` + meta("1", "25", "1", "1") + `}`, false},
		{"a negative total_count", importsBody(nil, meta("1", "25", "-7", "1")), false},
		{"current_page 0", importsBody(oneImport, meta("0", "25", "1", "1")), false},
		{"a page past total_pages with items", importsBody(oneImport, meta("5", "25", "1", "1")), false},
		{"total_pages 0", importsBody(nil, meta("1", "25", "0", "0")), false},
		{"more items than per_page", importsBody([]string{importSummaryJSON, importSummaryJSON}, meta("1", "1", "2", "2")), false},
		{"an import without an id", importsBody([]string{`{"type":"TransactionImport"}`}, meta("1", "25", "1", "1")), false},
		{"a negative rows_count", importsBody([]string{strings.Replace(importSummaryJSON, `"rows_count":3`, `"rows_count":-3`, 1)}, meta("1", "25", "1", "1")), false},
	}},
	{"GET /imports/{id}", http.StatusOK, func(ctx context.Context, c *Client) error {
		_, err := Imports.Show(ctx, c, importID)
		return err
	}, []shapeCase{
		{"an import", `{"data":` + importJSON + `}`, true},
		{"hello world", `{"hello":"world"}`, false},
		{"the import without its envelope", importJSON, false},
		{"data null", `{"data":null}`, false},
		{"data without an id", `{"data":{"type":"TransactionImport"}}`, false},
		{"a negative rows_count", `{"data":` + strings.Replace(importJSON, `"rows_count":3`, `"rows_count":-3`, 1) + `}`, false},
		{"a negative valid_rows_count", `{"data":` + strings.Replace(importJSON, `"valid_rows_count":3`, `"valid_rows_count":-3`, 1) + `}`, false},
	}},
	{"POST /chats", http.StatusCreated, func(ctx context.Context, c *Client) error {
		_, err := c.CreateChat(ctx, CreateChatRequest{Title: "Budget review", Message: "Hi"})
		return err
	}, []shapeCase{
		{"a legacy answer (messages and pagination)", chatJSON, true},
		{"a v0.7.x answer (messages [] and no pagination)", chatShow(nil, ""), true},
		{"hello world", `{"hello":"world"}`, false},
		{"no id", strings.Replace(chatJSON, `"id":"`+chatID+`",`, "", 1), false},
		{"a negative total_count", chatShow(nil, pag("1", "50", "-7", "1")), false},
		{"a message without an id", chatShow([]string{`{"role":"user"}`}, pag("1", "50", "1", "1")), false},
	}},
	{"PATCH /chats/{id}", http.StatusOK, func(ctx context.Context, c *Client) error {
		_, err := c.UpdateChat(ctx, chatID, "Renamed")
		return err
	}, []shapeCase{
		{"a legacy answer", chatJSON, true},
		{"a v0.7.x answer", chatShow(nil, ""), true},
		{"hello world", `{"hello":"world"}`, false},
		{"page 0", chatShow(msgs, pag("0", "50", "2", "1")), false},
	}},
	{"POST /chats/{id}/messages", http.StatusCreated, func(ctx context.Context, c *Client) error {
		_, err := c.SendMessage(ctx, chatID, SendMessageRequest{Content: "And in December?"})
		return err
	}, []shapeCase{
		{"a message", messageJSON, true},
		{"hello world", `{"hello":"world"}`, false},
		{"no id", strings.Replace(messageJSON, `"id":"m9",`, "", 1), false},
	}},
	{"POST /categories", http.StatusCreated, func(ctx context.Context, c *Client) error {
		_, err := c.CreateCategory(ctx, CreateCategoryRequest{Name: "Groceries"})
		return err
	}, []shapeCase{
		{"a category", categoryJSON, true},
		{"hello world", `{"hello":"world"}`, false},
		{"an empty object", `{}`, false},
		{"a negative subcategories_count", strings.Replace(rootCategoryJSON, `"subcategories_count":3`, `"subcategories_count":-1`, 1), false},
	}},
}

func TestClient_AnswersNotSuresAreNotData(t *testing.T) {
	var (
		mu     sync.Mutex
		status int
		body   string
	)
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		reply(w, status, body)
	})
	// Retries on: an answer that is not Sure's is not worth another call.
	c := u.client(t, WithRetryPolicy(RetryPolicy{MaxRetries: 2}))
	for _, ep := range answerCases {
		for _, tc := range ep.cases {
			t.Run(ep.endpoint+"/"+tc.name, func(t *testing.T) {
				mu.Lock()
				status, body = ep.status, tc.body
				mu.Unlock()
				before := u.count()
				err := ep.call(t.Context(), c)
				if n := u.count() - before; n != 1 {
					t.Errorf("%d requests, want 1", n)
				}
				if tc.ok {
					if err != nil {
						t.Errorf("error %v, want the answer taken", err)
					}
					return
				}
				var ue *UnavailableError
				switch {
				case !isNotSure(err):
					t.Fatalf("error = %v, want a not_sure *UnavailableError", err)
				case errors.As(err, &ue) && ue.Status != ep.status:
					t.Errorf("Status = %d, want the answer's %d", ue.Status, ep.status)
				case !strings.HasPrefix(ue.Op, strings.Fields(ep.endpoint)[0]+" /"):
					t.Errorf("Op = %q, want the request's", ue.Op)
				}
			})
		}
	}
}

// recordingFetcher passes every GET to its fetch and keeps what the fetch
// returned, as a cache in front of the client sees it.
type recordingFetcher struct {
	mu   sync.Mutex
	errs []error
}

func (f *recordingFetcher) Fetch(ctx context.Context, _ RequestKey, fetch func(context.Context) (*Response, error)) (*Response, error) {
	resp, err := fetch(ctx)
	f.mu.Lock()
	f.errs = append(f.errs, err)
	f.mu.Unlock()
	return resp, err
}

// A fetcher (the answer cache) gets an answer that is not Sure's as an
// error, never as a Response it would keep and hand out again; a good
// answer still reaches it as a Response, decoded once for everyone.
func TestClient_FetcherGetsNotSureAsAnError(t *testing.T) {
	good := categoriesBody(one, pag("1", "25", "1", "1"))
	answers := map[string]string{"1": `{"hello":"world"}`, "2": good}
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, answers[r.URL.Query().Get("page")])
	})
	f := &recordingFetcher{}
	c := u.client(t).WithFetcher(f)
	if _, err := c.ListCategories(t.Context(), ListCategoriesOptions{Page: 1}); !isNotSure(err) {
		t.Errorf("page 1: error = %v, want not_sure", err)
	}
	page, err := c.ListCategories(t.Context(), ListCategoriesOptions{Page: 2})
	if err != nil || len(page.Categories) != 1 {
		t.Fatalf("page 2: (%+v, %v), want its category", page, err)
	}
	if len(f.errs) != 2 || !isNotSure(f.errs[0]) || f.errs[1] != nil {
		t.Errorf("the fetcher saw errors %v, want [not_sure, nil]", f.errs)
	}
}

// A Response already held (a cache hit of an answer kept before this
// check, or one of another process) is checked all the same, once.
func TestClient_SharedResponseNotSure(t *testing.T) {
	resp := &Response{Status: http.StatusOK, Body: []byte(`{"categories":[],"pagination":{"page":1,"per_page":25,"total_count":-7,"total_pages":1}}`)}
	c := newUpstream(t, refuse(t)).client(t).WithFetcher(sharingFetcher(resp))
	for i := range 2 {
		_, err := c.ListCategories(t.Context(), ListCategoriesOptions{})
		var ue *UnavailableError
		if !isNotSure(err) || !errors.As(err, &ue) || !strings.Contains(ue.Error(), "total_count -7") {
			t.Errorf("call %d: error = %v, want not_sure naming total_count -7", i, err)
		}
	}
	if got := len(resp.decoded.byType); got != 1 {
		t.Errorf("%d decodings kept, want 1", got)
	}
}

// Answers of a DELETE (204, no body) need nothing.
func TestClient_DeleteAnswerNeedsNoBody(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	if err := u.client(t).DeleteChat(t.Context(), chatID); err != nil {
		t.Errorf("DeleteChat error: %v", err)
	}
}
