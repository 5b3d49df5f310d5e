package gqlhttp

import (
	"net/http/httptest"
	"testing"
)

// The key of a WebSocket is read from connection_init's payload in each
// shape clients send it; a payload without one leaves the upgrade
// request's header.
func TestKeyFromInit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		payload map[string]any
		want    string
		ok      bool
	}{
		{"X-Api-Key", map[string]any{"X-Api-Key": "k1"}, "k1", true},
		{"any case", map[string]any{"x-api-key": "k2"}, "k2", true},
		{"headers", map[string]any{"headers": map[string]any{"X-API-KEY": "k3"}}, "k3", true},
		{"apiKey", map[string]any{"apiKey": "k4"}, "k4", true},
		{"none", map[string]any{"Authorization": "Bearer x"}, "", false},
		{"not a string", map[string]any{"apiKey": 4}, "", false},
	} {
		got, ok := keyFromInit(tc.payload)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %q %v, want %q %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// A WebSocket from a page is accepted from the server's own origin and
// from the CORS origins only; a client without Origin (not a browser) is.
func TestOriginAllowed(t *testing.T) {
	s := &streams{opts: Options{CORSOrigins: []string{"https://app.example.com"}}}
	for _, tc := range []struct {
		origin string
		want   bool
	}{
		{"", true},
		{"http://suregql.example.com", true}, // the server's own
		{"https://app.example.com", true},
		{"https://evil.example.com", false},
	} {
		r := httptest.NewRequest("GET", "http://suregql.example.com/graphql", nil)
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if got := s.originAllowed(r); got != tc.want {
			t.Errorf("Origin %q: %v, want %v", tc.origin, got, tc.want)
		}
	}
	s.opts.CORSOrigins = []string{"*"}
	r := httptest.NewRequest("GET", "http://suregql.example.com/graphql", nil)
	r.Header.Set("Origin", "https://evil.example.com")
	if !s.originAllowed(r) {
		t.Error(`-cors-origins "*": refused, want any origin`)
	}
}
