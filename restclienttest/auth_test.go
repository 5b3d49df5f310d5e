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
		{name: "valid key with bearer Authorization", key: DemoKey, opts: []option{withHeader("Authorization", "Bearer abc")}},
		{name: "valid key with empty Authorization", key: DemoKey, opts: []option{withHeader("Authorization", "")}},
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
		serve(t, s, http.MethodGet, "/api/v1/categories", DemoKey, withHeader("Authorization", "Bearer x"))
	}
	wantStatus(t, get(t, s, "/api/v1/categories", DemoKey), http.StatusOK)
}

func TestRouting(t *testing.T) {
	const notFound = `{"error":"not_found","message":"Not found"}`
	tests := []struct {
		name, method, target string
		wantStatus           int
	}{
		{"unknown resource", http.MethodGet, "/api/v1/accounts", http.StatusNotFound},
		{"imports index is outside the subset", http.MethodGet, "/api/v1/imports", http.StatusNotFound},
		{"other version", http.MethodGet, "/api/v2/categories", http.StatusNotFound},
		{"root", http.MethodGet, "/", http.StatusNotFound},
		{"category write", http.MethodPost, "/api/v1/categories", http.StatusNotFound},
		{"chat delete", http.MethodDelete, "/api/v1/chats/" + seedID("demo/chat/Net worth trend"), http.StatusNotFound},
		{"nested chat path", http.MethodGet, "/api/v1/chats/x/messages", http.StatusNotFound},
		{"empty segment", http.MethodGet, "/api/v1//categories", http.StatusNotFound},
		{"trailing slash is ignored", http.MethodGet, "/api/v1/categories/", http.StatusOK},
		{"HEAD is routed as GET", http.MethodHead, "/api/v1/categories", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFixed()
			rec := serve(t, s, tt.method, tt.target, DemoKey)
			if tt.wantStatus == http.StatusNotFound {
				wantJSON(t, rec, http.StatusNotFound, notFound)
			} else {
				wantStatus(t, rec, tt.wantStatus)
			}
			// Routing comes after authentication and rate limiting: even a
			// 404 is counted and carries the rate-limit headers.
			if got := rec.Header().Get("X-RateLimit-Remaining"); got != "999" {
				t.Errorf("X-RateLimit-Remaining: got %q, want 999", got)
			}
			if got := s.Calls(); got != 1 {
				t.Errorf("Calls: got %d, want 1", got)
			}
		})
	}
}

// The route is found before the AI check: a user without AI gets 404, not
// 403, on a route that does not exist.
func TestRoutingBeforeFeatureCheck(t *testing.T) {
	s := newFixed()
	rec := serve(t, s, http.MethodDelete, "/api/v1/chats/"+seedID("demo/chat/Net worth trend"), NoAIKey)
	wantStatus(t, rec, http.StatusNotFound)
}
