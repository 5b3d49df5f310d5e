package restclienttest

import (
	"net/http"
	"testing"
)

const unauthorizedBody = `{"error":"unauthorized","message":"Access token or API key is invalid, expired, or missing"}`

func TestAuthentication(t *testing.T) {
	tests := []struct {
		name string
		key  string
		opts []option
	}{
		{name: "no key", key: ""},
		{name: "unknown key", key: "not-a-key"},
		// The upstream tries OAuth first: any Authorization header fails,
		// even next to a valid API key.
		{name: "valid key with bearer Authorization", key: DemoKey, opts: []option{withAuthorization("Bearer abc")}},
		{name: "valid key with empty Authorization", key: DemoKey, opts: []option{withAuthorization("")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFixed()
			rec := serve(t, s, http.MethodGet, "/api/v1/categories", tt.key, tt.opts...)
			wantJSON(t, rec, http.StatusUnauthorized, unauthorizedBody)
			if got := rec.Header().Get("X-RateLimit-Limit"); got != "" {
				t.Errorf("X-RateLimit-Limit: got %q, want none on an unauthenticated answer", got)
			}
			if got := s.Calls(); got != 1 {
				t.Errorf("Calls: got %d, want 1 (unauthenticated requests are recorded)", got)
			}
		})
	}
}

func TestUnauthenticatedRequestsDoNotCount(t *testing.T) {
	s := newFixed()
	s.SetRateLimit(DemoKey, 1)
	for range 3 {
		serve(t, s, http.MethodGet, "/api/v1/categories", DemoKey, withAuthorization("Bearer x"))
	}
	wantStatus(t, get(t, s, "/api/v1/categories", DemoKey), http.StatusOK)
}

// routingError is Rails' answer when no route matches.
const routingError = `{"status":404,"error":"Not Found"}`

func TestRouting(t *testing.T) {
	chat := "/api/v1/chats/" + seedID("demo/chat/Net worth trend")
	tests := []struct {
		name, method, target string
		version              Version
		wantStatus           int // 404 here means a routing error
	}{
		{"unknown resource", http.MethodGet, "/api/v1/budgets_of_nothing", Today, http.StatusNotFound},
		{"a show a version lacks", http.MethodGet, "/api/v1/accounts/" + seedID("x"), Legacy, http.StatusNotFound},
		{"other API version", http.MethodGet, "/api/v2/categories", Today, http.StatusNotFound},
		{"root", http.MethodGet, "/", Today, http.StatusNotFound},
		{"category update", http.MethodPatch, "/api/v1/categories/" + seedID("x"), Today, http.StatusNotFound},
		{"nested chat path", http.MethodGet, chat + "/messages", Today, http.StatusNotFound},
		{"retry with GET", http.MethodGet, chat + "/messages/retry", Today, http.StatusNotFound},
		{"deeper chat path", http.MethodPost, chat + "/messages/retry/now", Today, http.StatusNotFound},
		{"empty segment", http.MethodGet, "/api/v1//categories", Today, http.StatusNotFound},
		{"import update", http.MethodPatch, "/api/v1/imports/" + seedID("x"), Today, http.StatusNotFound},
		// Endpoints Legacy did not have yet.
		{"legacy: category create", http.MethodPost, "/api/v1/categories", Legacy, http.StatusNotFound},
		{"legacy: imports index", http.MethodGet, "/api/v1/imports", Legacy, http.StatusNotFound},
		{"legacy: imports index, trailing slash", http.MethodGet, "/api/v1/imports/", Legacy, http.StatusNotFound},
		// Routed: the endpoint answers, with the rate-limit headers.
		{"today: imports index", http.MethodGet, "/api/v1/imports", Today, http.StatusOK},
		{"today: category create without body", http.MethodPost, "/api/v1/categories", Today, http.StatusBadRequest},
		{"chat delete", http.MethodDelete, chat, Legacy, http.StatusNoContent},
		{"legacy: chat show", http.MethodGet, chat, Legacy, http.StatusOK},
		{"trailing slash is ignored", http.MethodGet, "/api/v1/categories/", Today, http.StatusOK},
		{"HEAD is routed as GET", http.MethodHead, "/api/v1/categories", Today, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFixedAs(tt.version)
			rec := serve(t, s, tt.method, tt.target, DemoKey)
			if got := s.Calls(); got != 1 {
				t.Errorf("Calls: got %d, want 1 (every request is recorded)", got)
			}
			if tt.wantStatus != http.StatusNotFound {
				wantStatus(t, rec, tt.wantStatus)
				if got := rec.Header().Get("X-RateLimit-Remaining"); got != "999" {
					t.Errorf("X-RateLimit-Remaining: got %q, want 999", got)
				}
				return
			}
			wantJSON(t, rec, http.StatusNotFound, routingError)
			// The router answers before any controller: no rate-limit
			// header, and the key's window is untouched.
			wantNoRateHeaders(t, rec)
			wantRateHeaders(t, get(t, s, "/api/v1/categories", DemoKey), 1000, 999, 1242)
		})
	}
}

// A routing error comes before authentication and before the AI check:
// whatever the key (none, unknown, with an Authorization header, a user
// without AI), a route that does not exist is 404, never 401 or 403.
func TestRoutingBeforeAuthentication(t *testing.T) {
	target := "/api/v1/chats/" + seedID("demo/chat/Net worth trend") + "/messages"
	tests := []struct {
		name string
		key  string
		opts []option
	}{
		{name: "no key"},
		{name: "unknown key", key: "not-a-key"},
		{name: "Authorization header", key: DemoKey, opts: []option{withAuthorization("Bearer abc")}},
		{name: "user without AI", key: NoAIKey},
		{name: "read-only key", key: ReadOnlyKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFixed()
			s.SetRateLimit(tt.key, 1)
			rec := serve(t, s, http.MethodGet, target, tt.key, tt.opts...)
			wantJSON(t, rec, http.StatusNotFound, routingError)
			wantNoRateHeaders(t, rec)
			want := []Request{{Method: "GET", Path: target, APIKey: tt.key, Status: 404}}
			if got := s.Requests(); len(got) != 1 || got[0] != want[0] {
				t.Errorf("Requests: got %+v, want %+v", got, want)
			}
			if got := s.CallsFor(tt.key); got != 1 {
				t.Errorf("CallsFor: got %d, want 1", got)
			}
		})
	}
}

// Unknown routes are not counted: a key at its limit still gets a routing
// 404 (not 429), and a key below it keeps its budget.
func TestRoutingErrorsDoNotCount(t *testing.T) {
	for _, v := range versions {
		t.Run(v.String(), func(t *testing.T) {
			s := newFixedAs(v)
			s.SetRateLimit(DemoKey, 1)
			for range 3 {
				wantJSON(t, get(t, s, "/api/v1/nowhere", DemoKey), http.StatusNotFound, routingError)
			}
			wantRateHeaders(t, get(t, s, "/api/v1/categories", DemoKey), 1, 0, 1242)
			wantJSON(t, get(t, s, "/api/v1/nowhere", DemoKey), http.StatusNotFound, routingError)
			wantStatus(t, get(t, s, "/api/v1/categories", DemoKey), http.StatusTooManyRequests)
			if got := s.Calls(); got != 6 {
				t.Errorf("Calls: got %d, want 6", got)
			}
		})
	}
}

// An endpoint's own 404 (an unknown id) is an authenticated answer: it
// carries the rate-limit headers and is counted.
func TestEndpointNotFoundCounts(t *testing.T) {
	tests := []struct{ target, body string }{
		{"/api/v1/categories/" + seedID("none"), `{"error":"not_found","message":"Category not found"}`},
		{"/api/v1/imports/" + seedID("none"), `{"error":"not_found","message":"Import not found"}`},
		{"/api/v1/chats/" + seedID("none"), `{"error":"Chat not found"}`},
	}
	for _, v := range versions {
		for _, tt := range tests {
			t.Run(v.String()+" "+tt.target, func(t *testing.T) {
				s := newFixedAs(v)
				rec := get(t, s, tt.target, DemoKey)
				wantJSON(t, rec, http.StatusNotFound, tt.body)
				wantRateHeaders(t, rec, 1000, 999, 1242)
			})
		}
	}
}
