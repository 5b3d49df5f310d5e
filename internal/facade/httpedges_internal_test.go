package facade

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/suregql/suregql/internal/state/callerkey"
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

// acceptedKeys learns a key from a 2xx, forgets it at a 401, ignores
// other answers, and holds at most maxAcceptedKeys.
func TestAcceptedKeys(t *testing.T) {
	a := newAcceptedKeys()
	ring := callerkey.NewRing(nil, false)
	k, other := ring.Key("k"), ring.Key("other")
	a.learn(k, http.StatusNotFound)
	a.learn(k, http.StatusTooManyRequests)
	if a.has(k.ID()) {
		t.Error("a key answered 404 and 429 only is accepted")
	}
	a.learn(k, http.StatusOK)
	if !a.has(k.ID()) || a.has(other.ID()) || a.has("") {
		t.Error("a key answered 200 is not accepted, or another is")
	}
	a.learn(k, http.StatusServiceUnavailable)
	if !a.has(k.ID()) {
		t.Error("a 503 forgot the key")
	}
	a.learn(k, http.StatusUnauthorized)
	if a.has(k.ID()) {
		t.Error("a key answered 401 is still accepted")
	}
	for i := range maxAcceptedKeys + 100 {
		a.learn(ring.Key(fmt.Sprint("key-", i)), http.StatusCreated)
	}
	if n := len(a.ids); n != maxAcceptedKeys {
		t.Errorf("%d keys held, want %d", n, maxAcceptedKeys)
	}
	var nilKeys *acceptedKeys
	if nilKeys.has("k") {
		t.Error("a nil acceptedKeys accepts a key")
	}
}
