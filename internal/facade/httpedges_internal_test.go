package facade

import (
	"net/url"
	"testing"
)

// A span's URL is its endpoint's template on the upstream's origin, under
// the base URL's path when Sure is served under a prefix: never an id nor
// a query.
func TestURLTemplate(t *testing.T) {
	for _, tc := range []struct{ url, endpoint, full, tmpl string }{
		{"https://sure.example.com/api/v1/categories/3c4b3c4b-0000-4000-8000-000000000001?x=1", "GET /api/v1/categories/{id}",
			"https://sure.example.com/api/v1/categories/{id}", "/api/v1/categories/{id}"},
		{"http://127.0.0.1:8080/sure/api/v1/chats/3c4b3c4b-0000-4000-8000-000000000001/messages?page=2", "POST /api/v1/chats/{id}/messages",
			"http://127.0.0.1:8080/sure/api/v1/chats/{id}/messages", "/sure/api/v1/chats/{id}/messages"},
		{"https://sure.example.com/api/v1/chats?page=1&per_page=100", "GET /api/v1/chats",
			"https://sure.example.com/api/v1/chats", "/api/v1/chats"},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if full, tmpl := urlTemplate(u, tc.endpoint); full != tc.full || tmpl != tc.tmpl {
			t.Errorf("urlTemplate(%s, %s) = %s, %s; want %s, %s", tc.url, tc.endpoint, full, tmpl, tc.full, tc.tmpl)
		}
	}
}
