package restclient

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/suregql/suregql/internal/limits/badinput"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// basePath is where the fake upstream is mounted: the client must keep the
// base URL's path in front of /api/v1.
const basePath = "/sure"

const testKey = "sk-test-0123456789"

// Canonical ids of the fixtures.
const (
	catID    = "6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f"
	parentID = "0a9b8c7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d"
	chatID   = "0b7e4a52-9d1c-4f3e-a2b6-5c8d9e0f1a2b"
	importID = "d4c3b2a1-1234-4abc-9def-0123456789ab"
)

// upstream is a fresh test server for one test, mounted under basePath.
type upstream struct {
	srv      *httptest.Server
	requests atomic.Int32
}

// newUpstream starts a server that counts requests, fails the test for any
// request outside basePath/api/v1, and hands the rest to h.
func newUpstream(t *testing.T, h http.HandlerFunc) *upstream {
	t.Helper()
	u := &upstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.requests.Add(1)
		if !strings.HasPrefix(r.URL.Path, basePath+"/api/v1/") {
			t.Errorf("request path = %q, want it under %q", r.URL.Path, basePath+"/api/v1/")
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

// client returns a client of u with testKey. Retries are off unless opts
// say otherwise, so that error answers cost exactly one request.
func (u *upstream) client(t *testing.T, opts ...Option) *Client {
	t.Helper()
	opts = append([]Option{WithRetryPolicy(RetryPolicy{})}, opts...)
	c, err := New(u.srv.URL+basePath, opts...)
	if err != nil {
		t.Fatalf("New(%q) error: %v", u.srv.URL+basePath, err)
	}
	return c.WithAPIKey(testKey)
}

func (u *upstream) count() int { return int(u.requests.Load()) }

// wantRequest is what a handler expects of a request.
type wantRequest struct {
	method string
	path   string     // below the base URL, e.g. "/api/v1/categories"
	query  url.Values // nil: no query string at all
	body   string     // JSON body of a write; "": no body
}

// checkRequest reports every way r differs from want. It runs on the
// server's goroutine, so it only reports (t.Errorf), never stops.
func checkRequest(t *testing.T, r *http.Request, want wantRequest) {
	t.Helper()
	if r.Method != want.method {
		t.Errorf("method = %s, want %s", r.Method, want.method)
	}
	if got, want := r.URL.EscapedPath(), basePath+want.path; got != want {
		t.Errorf("path = %q, want %q", got, want)
	}
	if want.query == nil {
		if r.URL.RawQuery != "" {
			t.Errorf("query = %q, want none", r.URL.RawQuery)
		}
	} else if got := r.URL.Query(); !reflect.DeepEqual(got, want.query) {
		t.Errorf("query = %v, want %v", got, want.query)
	}
	if got := r.Header.Values("X-Api-Key"); len(got) != 1 || got[0] != testKey {
		t.Errorf("X-Api-Key = %q, want [%q]", got, testKey)
	}
	if got, ok := r.Header["Authorization"]; ok {
		t.Errorf("Authorization = %q, want no such header (it makes the upstream try OAuth and answer 401)", got)
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		t.Errorf("read request body: %v", err)
	}
	if want.body == "" {
		if len(body) != 0 {
			t.Errorf("body = %q, want none", body)
		}
		return
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q, want application/json (Rails reads anything else as form data)", got)
	}
	var got, wantJSON any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Errorf("body %q is not JSON: %v", body, err)
		return
	}
	if err := json.Unmarshal([]byte(want.body), &wantJSON); err != nil {
		t.Fatalf("bad test: want body %q is not JSON: %v", want.body, err)
	}
	if !reflect.DeepEqual(got, wantJSON) {
		t.Errorf("body = %s, want %s", body, want.body)
	}
}

// reply answers status with a JSON body.
func reply(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// expect returns a handler that checks each request against want and
// answers status and body.
func expect(t *testing.T, want wantRequest, status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		checkRequest(t, r, want)
		reply(w, status, body)
	}
}

// refuse is a handler for tests that must not reach the upstream.
func refuse(t *testing.T) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected request %s %s", r.Method, r.URL)
		reply(w, http.StatusTeapot, `{}`)
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return ts
}

// Fixtures. Every object carries a field this client does not know: later
// upstream versions may add some and they must be ignored.
const (
	categoryJSON = `{"id":"` + catID + `","name":"Groceries","classification":"expense","color":"#f97316",
		"icon":"shopping-cart","parent":{"id":"` + parentID + `","name":"Food","color":"#000000"},
		"subcategories_count":0,"created_at":"2025-12-17T15:00:01Z","updated_at":"2025-12-18T09:30:00Z",
		"lucide_version":"0.4","future":{"nested":[1,2,3]}}`
	rootCategoryJSON = `{"id":"` + parentID + `","name":"Food","classification":"expense","color":"#000000",
		"icon":"utensils","parent":null,"subcategories_count":3,"created_at":"2025-12-17T15:00:00Z",
		"updated_at":"2025-12-17T15:00:00Z"}`
	chatJSON = `{"id":"` + chatID + `","title":"Budget review","error":null,
		"created_at":"2026-01-10T11:39:18Z","updated_at":"2026-01-10T11:40:00Z","archived":false,
		"messages":[
			{"id":"m1","type":"user_message","role":"user","content":"How much on groceries?",
			 "created_at":"2026-01-10T11:39:18Z","updated_at":"2026-01-10T11:39:18Z","reactions":[]},
			{"id":"m2","type":"assistant_message","role":"assistant","content":"About 420 EUR.","model":"gpt-4.1",
			 "tool_calls":[{"id":"tc1","function_name":"get_transactions","function_arguments":{"category":"Groceries"},
			   "function_result":{"total":420},"created_at":"2026-01-10T11:39:30Z","provider":"openai"}],
			 "created_at":"2026-01-10T11:39:40Z","updated_at":"2026-01-10T11:39:41Z"}],
		"pagination":{"page":1,"per_page":50,"total_count":2,"total_pages":1,"next":null}}`
)

func wantCategory(t *testing.T) Category {
	t.Helper()
	return Category{
		ID: catID, Name: "Groceries", Classification: "expense", Color: "#f97316", Icon: "shopping-cart",
		Parent:             &CategoryRef{ID: parentID, Name: "Food"},
		SubcategoriesCount: 0,
		CreatedAt:          mustTime(t, "2025-12-17T15:00:01Z"),
		UpdatedAt:          mustTime(t, "2025-12-18T09:30:00Z"),
	}
}

func wantChat(t *testing.T) *Chat {
	t.Helper()
	return &Chat{
		ID: chatID, Title: "Budget review",
		CreatedAt: mustTime(t, "2026-01-10T11:39:18Z"),
		UpdatedAt: mustTime(t, "2026-01-10T11:40:00Z"),
		Messages: []Message{
			{
				ID: "m1", Type: "user_message", Role: "user", Content: "How much on groceries?",
				CreatedAt: mustTime(t, "2026-01-10T11:39:18Z"), UpdatedAt: mustTime(t, "2026-01-10T11:39:18Z"),
			},
			{
				ID: "m2", Type: "assistant_message", Role: "assistant", Content: "About 420 EUR.", Model: new("gpt-4.1"),
				ToolCalls: []ToolCall{{
					ID: "tc1", FunctionName: "get_transactions",
					FunctionArguments: json.RawMessage(`{"category":"Groceries"}`),
					FunctionResult:    json.RawMessage(`{"total":420}`),
					CreatedAt:         mustTime(t, "2026-01-10T11:39:30Z"),
				}},
				CreatedAt: mustTime(t, "2026-01-10T11:39:40Z"), UpdatedAt: mustTime(t, "2026-01-10T11:39:41Z"),
			},
		},
		Pagination: &Pagination{Page: 1, PerPage: 50, TotalCount: 2, TotalPages: 1},
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		baseURL string
		wantErr bool
		want    string // the API root the client derives
	}{
		{name: "host only", baseURL: "https://sure.example.com", want: "https://sure.example.com/api/v1"},
		{name: "trailing slash", baseURL: "https://sure.example.com/", want: "https://sure.example.com/api/v1"},
		{name: "base path", baseURL: "http://localhost:3000/sure/", want: "http://localhost:3000/sure/api/v1"},
		{name: "empty", baseURL: "", wantErr: true},
		{name: "no scheme", baseURL: "sure.example.com", wantErr: true},
		{name: "other scheme", baseURL: "ftp://sure.example.com", wantErr: true},
		{name: "no host", baseURL: "http://", wantErr: true},
		{name: "unparsable", baseURL: "http://sure.example.com:port/", wantErr: true},
		{name: "the API root", baseURL: "https://sure.example.com/api/v1", want: "https://sure.example.com/api/v1"},
		{name: "the API root with a slash", baseURL: "https://sure.example.com/api/v1/", want: "https://sure.example.com/api/v1"},
		{name: "the API root under a base path", baseURL: "http://localhost:3000/sure/api/v1", want: "http://localhost:3000/sure/api/v1"},
		{name: "an escaped base path", baseURL: "http://localhost:3000/my%20sure/", want: "http://localhost:3000/my%20sure/api/v1"},
		{name: "surrounding blanks", baseURL: " https://sure.example.com ", want: "https://sure.example.com/api/v1"},
		{name: "an endpoint of the API", baseURL: "https://sure.example.com/api/v1/categories", wantErr: true},
		{name: "user info", baseURL: "https://user:secret@sure.example.com", wantErr: true},
		{name: "a query", baseURL: "https://sure.example.com/?x=1", wantErr: true},
		{name: "a fragment", baseURL: "https://sure.example.com/#top", wantErr: true},
		{name: "opaque", baseURL: "https:sure.example.com", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.baseURL)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("New(%q) = %v, nil; want an error", tt.baseURL, c.baseURL)
				}
				return
			}
			if err != nil {
				t.Fatalf("New(%q) error: %v", tt.baseURL, err)
			}
			if got := c.baseURL.String(); got != tt.want {
				t.Errorf("New(%q) API root = %q, want %q", tt.baseURL, got, tt.want)
			}
			if c.http == nil || c.http == http.DefaultClient || c.http.Timeout != DefaultTimeout {
				t.Errorf("New(%q) http client = %+v, want a private one with Timeout %s", tt.baseURL, c.http, DefaultTimeout)
			}
			if c.retry != DefaultRetryPolicy {
				t.Errorf("New(%q) retry policy = %+v, want %+v", tt.baseURL, c.retry, DefaultRetryPolicy)
			}
		})
	}
}

func TestClient_WithAPIKey(t *testing.T) {
	var (
		mu   sync.Mutex
		keys []string
	)
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("X-Api-Key"))
		mu.Unlock()
		reply(w, http.StatusOK, categoryJSON)
	})
	base, err := New(u.srv.URL + basePath)
	if err != nil {
		t.Fatalf("New error: %v", err)
	}
	alice, bob := base.WithAPIKey("key-alice"), base.WithAPIKey("key-bob")
	if got := base.APIKey(); got != "" {
		t.Errorf("base APIKey() = %q after WithAPIKey on it, want it unchanged (\"\")", got)
	}
	if got := alice.APIKey(); got != "key-alice" {
		t.Errorf("alice APIKey() = %q, want key-alice", got)
	}
	for _, c := range []*Client{alice, bob, alice} {
		if _, err := c.GetCategory(t.Context(), catID); err != nil {
			t.Fatalf("GetCategory error: %v", err)
		}
	}
	if want := []string{"key-alice", "key-bob", "key-alice"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("X-Api-Key of the requests = %q, want %q", keys, want)
	}
}

func TestClient_ListCategories(t *testing.T) {
	const body = `{"categories":[` + rootCategoryJSON + `,` + categoryJSON + `],
		"pagination":{"page":2,"per_page":2,"total_count":9,"total_pages":5,"extra":true},"meta":{}}`
	tests := []struct {
		name      string
		opts      ListCategoriesOptions
		wantQuery url.Values
	}{
		{name: "no options", opts: ListCategoriesOptions{}},
		{
			name:      "every filter",
			opts:      ListCategoriesOptions{Page: 2, PerPage: 50, Classification: "income", RootsOnly: true, ParentID: parentID},
			wantQuery: url.Values{"page": {"2"}, "per_page": {"50"}, "classification": {"income"}, "roots_only": {"true"}, "parent_id": {parentID}},
		},
		{
			name:      "per_page above 100 is capped, not reset to 25 by the server",
			opts:      ListCategoriesOptions{PerPage: 500},
			wantQuery: url.Values{"per_page": {"100"}},
		},
		{name: "negative page and per_page are not sent", opts: ListCategoriesOptions{Page: -1, PerPage: -5}},
		{
			name:      "parent id in upper case with braces is sent canonical",
			opts:      ListCategoriesOptions{ParentID: "{" + strings.ToUpper(parentID) + "}"},
			wantQuery: url.Values{"parent_id": {parentID}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, expect(t, wantRequest{method: http.MethodGet, path: "/api/v1/categories", query: tt.wantQuery}, http.StatusOK, body))
			got, err := u.client(t).ListCategories(t.Context(), tt.opts)
			if err != nil {
				t.Fatalf("ListCategories error: %v", err)
			}
			root := Category{
				ID: parentID, Name: "Food", Classification: "expense", Color: "#000000", Icon: "utensils",
				SubcategoriesCount: 3,
				CreatedAt:          mustTime(t, "2025-12-17T15:00:00Z"), UpdatedAt: mustTime(t, "2025-12-17T15:00:00Z"),
			}
			want := &CategoryPage{
				Categories: []Category{root, wantCategory(t)},
				Pagination: Pagination{Page: 2, PerPage: 2, TotalCount: 9, TotalPages: 5},
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ListCategories = %+v, want %+v", got, want)
			}
			if n := u.count(); n != 1 {
				t.Errorf("requests = %d, want 1", n)
			}
		})
	}
}

func TestClient_GetCategory(t *testing.T) {
	u := newUpstream(t, expect(t, wantRequest{method: http.MethodGet, path: "/api/v1/categories/" + catID}, http.StatusOK, categoryJSON))
	got, err := u.client(t).GetCategory(t.Context(), catID)
	if err != nil {
		t.Fatalf("GetCategory error: %v", err)
	}
	if want := wantCategory(t); !reflect.DeepEqual(*got, want) {
		t.Errorf("GetCategory = %+v, want %+v", *got, want)
	}
}

func TestClient_ListChats(t *testing.T) {
	const body = `{"chats":[
		{"id":"` + chatID + `","title":"Budget review","last_message_at":"2026-01-10T11:39:40Z","message_count":2,
		 "error":"model overloaded","created_at":"2026-01-10T11:39:18Z","updated_at":"2026-01-10T11:40:00Z","pinned":true},
		{"id":"c2","title":"Fresh","last_message_at":null,"message_count":0,"error":null,
		 "created_at":"2026-01-09T08:00:00Z","updated_at":"2026-01-09T08:00:00Z"}],
		"pagination":{"page":3,"per_page":20,"total_count":42,"total_pages":3}}`
	tests := []struct {
		name      string
		page      int
		wantQuery url.Values
	}{
		{name: "default page", page: 0},
		{name: "page 3", page: 3, wantQuery: url.Values{"page": {"3"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, expect(t, wantRequest{method: http.MethodGet, path: "/api/v1/chats", query: tt.wantQuery}, http.StatusOK, body))
			got, err := u.client(t).ListChats(t.Context(), tt.page)
			if err != nil {
				t.Fatalf("ListChats error: %v", err)
			}
			want := &ChatPage{
				Chats: []ChatSummary{
					{
						ID: chatID, Title: "Budget review", FirstMessageAt: new(mustTime(t, "2026-01-10T11:39:40Z")),
						MessageCount: 2, Error: new("model overloaded"),
						CreatedAt: mustTime(t, "2026-01-10T11:39:18Z"), UpdatedAt: mustTime(t, "2026-01-10T11:40:00Z"),
					},
					{
						ID: "c2", Title: "Fresh",
						CreatedAt: mustTime(t, "2026-01-09T08:00:00Z"), UpdatedAt: mustTime(t, "2026-01-09T08:00:00Z"),
					},
				},
				Pagination: Pagination{Page: 3, PerPage: 20, TotalCount: 42, TotalPages: 3},
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ListChats = %+v, want %+v", got, want)
			}
		})
	}
}

func TestClient_GetChat(t *testing.T) {
	tests := []struct {
		name      string
		page      int
		wantQuery url.Values
	}{
		{name: "first page sends no page", page: 1},
		{name: "page 0 sends no page", page: 0},
		{name: "page 2", page: 2, wantQuery: url.Values{"page": {"2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, expect(t, wantRequest{method: http.MethodGet, path: "/api/v1/chats/" + chatID, query: tt.wantQuery}, http.StatusOK, chatJSON))
			got, err := u.client(t).GetChat(t.Context(), chatID, tt.page)
			if err != nil {
				t.Fatalf("GetChat error: %v", err)
			}
			if want := wantChat(t); !reflect.DeepEqual(got, want) {
				t.Errorf("GetChat = %+v, want %+v", got, want)
			}
		})
	}
}

// TestClient_GetChat_NullFunctionResult pins the documented contract of
// ToolCall.FunctionResult: nil when absent or null.
func TestClient_GetChat_NullFunctionResult(t *testing.T) {
	const body = `{"id":"` + chatID + `","title":"t","messages":[{"id":"m","type":"assistant_message","role":"assistant",
		"content":"x","tool_calls":[{"id":"a","function_name":"f","function_arguments":{},"function_result":null},
		{"id":"b","function_name":"f","function_arguments":{}}]}]}`
	u := newUpstream(t, expect(t, wantRequest{method: http.MethodGet, path: "/api/v1/chats/" + chatID}, http.StatusOK, body))
	got, err := u.client(t).GetChat(t.Context(), chatID, 1)
	if err != nil {
		t.Fatalf("GetChat error: %v", err)
	}
	for _, tc := range got.Messages[0].ToolCalls {
		if tc.FunctionResult != nil {
			t.Errorf("tool call %s FunctionResult = %q, want nil", tc.ID, tc.FunctionResult)
		}
	}
}

func TestClient_CreateChat(t *testing.T) {
	tests := []struct {
		name     string
		req      CreateChatRequest
		wantBody string
	}{
		{
			name:     "title, message and model",
			req:      CreateChatRequest{Title: "Budget review", Message: "How much on groceries?", Model: "gpt-4.1"},
			wantBody: `{"title":"Budget review","message":"How much on groceries?","model":"gpt-4.1"}`,
		},
		{name: "title only", req: CreateChatRequest{Title: "Budget review"}, wantBody: `{"title":"Budget review"}`},
		{name: "blank title is still sent", req: CreateChatRequest{}, wantBody: `{"title":""}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, expect(t, wantRequest{method: http.MethodPost, path: "/api/v1/chats", body: tt.wantBody}, http.StatusCreated, chatJSON))
			got, err := u.client(t).CreateChat(t.Context(), tt.req)
			if err != nil {
				t.Fatalf("CreateChat error: %v", err)
			}
			if want := wantChat(t); !reflect.DeepEqual(got, want) {
				t.Errorf("CreateChat = %+v, want %+v", got, want)
			}
		})
	}
}

func TestClient_UpdateChat(t *testing.T) {
	u := newUpstream(t, expect(t, wantRequest{method: http.MethodPatch, path: "/api/v1/chats/" + chatID, body: `{"title":"Renamed"}`}, http.StatusOK, chatJSON))
	got, err := u.client(t).UpdateChat(t.Context(), strings.ToUpper(chatID), "Renamed")
	if err != nil {
		t.Fatalf("UpdateChat error: %v", err)
	}
	if want := wantChat(t); !reflect.DeepEqual(got, want) {
		t.Errorf("UpdateChat = %+v, want %+v", got, want)
	}
}

func TestClient_GetImport(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *Import
	}{
		{
			name: "complete, no error key, milliseconds",
			body: `{"data":{"id":"` + importID + `","type":"TransactionImport","status":"complete",
				"created_at":"2026-01-10T11:39:18.123Z","updated_at":"2026-01-10T11:41:02.5Z",
				"account_id":"` + parentID + `",
				"configuration":{"date_col_label":"Date","amount_col_label":"Amount","name_col_label":"Name",
				 "category_col_label":null,"tags_col_label":null,"notes_col_label":null,"account_col_label":null,
				 "date_format":"%Y-%m-%d","number_format":"1.234,56","signage_convention":"inflows_positive","rows_per_chunk":500},
				"stats":{"rows_count":120,"valid_rows_count":118},"rows_preview":[]}}`,
			want: &Import{
				ID: importID, Type: "TransactionImport", Status: "complete", AccountID: new(parentID),
				Configuration: ImportConfiguration{
					DateColLabel: new("Date"), AmountColLabel: new("Amount"), NameColLabel: new("Name"),
					DateFormat: new("%Y-%m-%d"), NumberFormat: new("1.234,56"), SignageConvention: new("inflows_positive"),
				},
				Stats:     ImportStats{RowsCount: 120, ValidRowsCount: new(118)},
				CreatedAt: time.Date(2026, 1, 10, 11, 39, 18, 123_000_000, time.UTC),
				UpdatedAt: time.Date(2026, 1, 10, 11, 41, 2, 500_000_000, time.UTC),
			},
		},
		{
			name: "failed, with error, everything else null",
			body: `{"data":{"id":"` + importID + `","type":"PdfImport","status":"failed","error":"Unreadable file",
				"created_at":"2026-01-10T11:39:18.000Z","updated_at":"2026-01-10T11:39:19Z","account_id":null,
				"configuration":{"date_col_label":null,"amount_col_label":null,"name_col_label":null,
				 "category_col_label":null,"tags_col_label":null,"notes_col_label":null,"account_col_label":null,
				 "date_format":null,"number_format":null,"signage_convention":null},
				"stats":{"rows_count":0,"valid_rows_count":null}}}`,
			want: &Import{
				ID: importID, Type: "PdfImport", Status: "failed", Error: new("Unreadable file"),
				CreatedAt: time.Date(2026, 1, 10, 11, 39, 18, 0, time.UTC),
				UpdatedAt: time.Date(2026, 1, 10, 11, 39, 19, 0, time.UTC),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, expect(t, wantRequest{method: http.MethodGet, path: "/api/v1/imports/" + importID}, http.StatusOK, tt.body))
			got, err := Imports.Show(t.Context(), u.client(t), importID)
			if err != nil {
				t.Fatalf("GetImport error: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("GetImport = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// endpointsByID calls every endpoint that takes an id with id.
var endpointsByID = []struct {
	name  string
	field string // the InvalidIDError's Field
	call  func(ctx context.Context, c *Client, id string) error
	want  func(canonical string) wantRequest
	reply string
}{
	{
		name: "GetCategory", field: "id",
		call: func(ctx context.Context, c *Client, id string) error { _, err := c.GetCategory(ctx, id); return err },
		want: func(id string) wantRequest {
			return wantRequest{method: http.MethodGet, path: "/api/v1/categories/" + id}
		},
		reply: categoryJSON,
	},
	{
		name: "ListCategories parent", field: "parent_id",
		call: func(ctx context.Context, c *Client, id string) error {
			_, err := c.ListCategories(ctx, ListCategoriesOptions{ParentID: id})
			return err
		},
		want: func(id string) wantRequest {
			return wantRequest{method: http.MethodGet, path: "/api/v1/categories", query: url.Values{"parent_id": {id}}}
		},
		reply: `{"categories":[],"pagination":{"page":1,"per_page":25,"total_count":0,"total_pages":1}}`,
	},
	{
		name: "GetChat", field: "id",
		call: func(ctx context.Context, c *Client, id string) error { _, err := c.GetChat(ctx, id, 1); return err },
		want: func(id string) wantRequest {
			return wantRequest{method: http.MethodGet, path: "/api/v1/chats/" + id}
		},
		reply: chatJSON,
	},
	{
		name: "UpdateChat", field: "id",
		call: func(ctx context.Context, c *Client, id string) error {
			_, err := c.UpdateChat(ctx, id, "t")
			return err
		},
		want: func(id string) wantRequest {
			return wantRequest{method: http.MethodPatch, path: "/api/v1/chats/" + id, body: `{"title":"t"}`}
		},
		reply: chatJSON,
	},
	{
		name: "GetImport", field: "id",
		call: func(ctx context.Context, c *Client, id string) error { _, err := Imports.Show(ctx, c, id); return err },
		want: func(id string) wantRequest {
			return wantRequest{method: http.MethodGet, path: "/api/v1/imports/" + id}
		},
		reply: `{"data":{"id":"` + importID + `","created_at":"2026-01-10T11:39:18.123Z","updated_at":"2026-01-10T11:39:18.123Z"}}`,
	},
}

func TestClient_InvalidIDs(t *testing.T) {
	ids := []string{
		"",
		"not-a-uuid",
		"42",
		"../imports/" + importID,
		catID[:35],                             // one digit short
		catID + "0",                            // one digit long
		"6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5g", // not hex
		catID + "?x=1",
		" " + catID,
	}
	for _, ep := range endpointsByID {
		for _, id := range ids {
			if id == "" && ep.field == "parent_id" {
				continue // an empty ParentID means "no filter"
			}
			t.Run(ep.name+"/"+strconv.Quote(id), func(t *testing.T) {
				u := newUpstream(t, refuse(t))
				err := ep.call(t.Context(), u.client(t), id)
				var ie *badinput.Error
				if !errors.As(err, &ie) {
					t.Fatalf("error = %T %v, want *badinput.Error", err, err)
				}
				if want := ep.field + ": " + badinput.Quote(id) + " is not a UUID"; ie.Arg != ep.field || ie.Error() != want {
					t.Errorf("error = %q (argument %q), want %q", ie.Error(), ie.Arg, want)
				}
				if IsNotFound(err) {
					t.Errorf("IsNotFound(%v) = true, want false", err)
				}
				if n := u.count(); n != 0 {
					t.Errorf("requests = %d, want 0", n)
				}
			})
		}
	}
}

func TestClient_CanonicalIDs(t *testing.T) {
	spellings := []struct{ name, id string }{
		{name: "canonical", id: catID},
		{name: "upper case", id: strings.ToUpper(catID)},
		{name: "braces", id: "{" + catID + "}"},
		{name: "upper case in braces", id: "{" + strings.ToUpper(catID) + "}"},
		{name: "urn", id: "urn:uuid:" + catID},
		{name: "no hyphens", id: strings.ReplaceAll(catID, "-", "")},
	}
	for _, ep := range endpointsByID {
		for _, sp := range spellings {
			t.Run(ep.name+"/"+sp.name, func(t *testing.T) {
				u := newUpstream(t, expect(t, ep.want(catID), http.StatusOK, ep.reply))
				if err := ep.call(t.Context(), u.client(t), sp.id); err != nil {
					t.Fatalf("call with %q error: %v", sp.id, err)
				}
				if n := u.count(); n != 1 {
					t.Errorf("requests = %d, want 1", n)
				}
			})
		}
	}
}

func TestCanonicalID(t *testing.T) {
	got, err := CanonicalID("id", "{"+strings.ToUpper(catID)+"}")
	if err != nil || got != catID {
		t.Errorf("CanonicalID(upper, braces) = %q, %v; want %q, nil", got, err, catID)
	}
	_, err = CanonicalID("parent_id", "root")
	var ie *badinput.Error
	if !errors.As(err, &ie) || ie.Arg != "parent_id" || ie.Error() != `parent_id: "root" is not a UUID` {
		t.Errorf("CanonicalID(junk) error = %v, want the *badinput.Error for parent_id", err)
	}
}

// memoFetcher answers repeated GETs from memory, per request key.
type memoFetcher struct {
	mu    sync.Mutex
	keys  []RequestKey
	cache map[RequestKey]*Response
}

func (m *memoFetcher) Fetch(ctx context.Context, key RequestKey, fetch func(context.Context) (*Response, error)) (*Response, error) {
	m.mu.Lock()
	m.keys = append(m.keys, key)
	if r, ok := m.cache[key]; ok {
		m.mu.Unlock()
		return r, nil
	}
	m.mu.Unlock()
	r, err := fetch(ctx)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cache == nil {
		m.cache = map[RequestKey]*Response{}
	}
	m.cache[key] = r
	return r, nil
}

func TestClient_WithFetcher(t *testing.T) {
	const page = `{"categories":[` + categoryJSON + `],"pagination":{"page":2,"per_page":10,"total_count":11,"total_pages":2}}`
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Limit", "100")
		w.Header().Set("X-RateLimit-Remaining", "99")
		w.Header().Set("X-RateLimit-Reset", "60")
		switch r.Method {
		case http.MethodGet:
			reply(w, http.StatusOK, page)
		default:
			reply(w, http.StatusCreated, chatJSON)
		}
	})
	m := &memoFetcher{}
	c := u.client(t).WithFetcher(m)
	opts := ListCategoriesOptions{Page: 2, PerPage: 10}
	for range 2 {
		got, err := c.ListCategories(t.Context(), opts)
		if err != nil {
			t.Fatalf("ListCategories error: %v", err)
		}
		if len(got.Categories) != 1 || got.Categories[0].ID != catID {
			t.Errorf("ListCategories categories = %+v, want the one fixture", got.Categories)
		}
	}
	if n := u.count(); n != 1 {
		t.Errorf("requests after two identical GETs through a memo = %d, want 1", n)
	}
	// Another key must not share the answer: the fetcher, the first
	// key's, does not follow the client to it.
	if _, err := c.WithAPIKey("other-key").ListCategories(t.Context(), opts); err != nil {
		t.Fatalf("ListCategories with another key error: %v", err)
	}
	// Writes bypass the fetcher.
	if _, err := c.CreateChat(t.Context(), CreateChatRequest{Title: "t"}); err != nil {
		t.Fatalf("CreateChat error: %v", err)
	}
	if n := u.count(); n != 3 {
		t.Errorf("requests = %d, want 3", n)
	}
	wantKey := RequestKey{Path: "categories?page=2&per_page=10"}
	if want := []RequestKey{wantKey, wantKey}; !reflect.DeepEqual(m.keys, want) {
		t.Errorf("fetcher keys = %+v, want %+v", m.keys, want)
	}
	resp := m.cache[wantKey]
	if resp == nil || resp.Status != http.StatusOK || string(resp.Body) != page {
		t.Fatalf("memoised response = %+v, want status 200 and the page body", resp)
	}
	if resp.RateLimit == nil || resp.RateLimit.Remaining != 99 {
		t.Errorf("memoised response rate limit = %+v, want Remaining 99", resp.RateLimit)
	}
}

func TestClient_WithFetcher_AnswersFromMemory(t *testing.T) {
	u := newUpstream(t, refuse(t))
	f := fetcherFunc(func(context.Context, RequestKey, func(context.Context) (*Response, error)) (*Response, error) {
		return &Response{Status: http.StatusOK, Body: []byte(categoryJSON)}, nil
	})
	got, err := u.client(t).WithFetcher(f).GetCategory(t.Context(), catID)
	if err != nil {
		t.Fatalf("GetCategory error: %v", err)
	}
	if want := wantCategory(t); !reflect.DeepEqual(*got, want) {
		t.Errorf("GetCategory = %+v, want %+v", *got, want)
	}
	if n := u.count(); n != 0 {
		t.Errorf("requests = %d, want 0", n)
	}
}

type fetcherFunc func(context.Context, RequestKey, func(context.Context) (*Response, error)) (*Response, error)

func (f fetcherFunc) Fetch(ctx context.Context, key RequestKey, fetch func(context.Context) (*Response, error)) (*Response, error) {
	return f(ctx, key, fetch)
}

// For binds a copy to one caller in one step, as the With* methods would:
// the key is sent, and the original client is left as it was.
func TestClient_For(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("X-Api-Key"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"chats":[],"pagination":{"page":1,"per_page":20,"total_count":0,"total_pages":1}}`))
	}))
	defer srv.Close()
	base, err := New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	gated := 0
	c := base.For(Caller{APIKey: "k1", Gate: func(context.Context, string, string, int) error { gated++; return nil }})
	if _, err := c.ListChats(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if c.APIKey() != "k1" || base.APIKey() != "" || gated != 1 || len(got) != 1 || got[0] != "k1" {
		t.Errorf("bound key %q, base key %q, gate asked %d times, upstream saw %v; want k1, none, 1, [k1]", c.APIKey(), base.APIKey(), gated, got)
	}
}
