package gqlhttp

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
)

// The key of a WebSocket is the upgrade request's header, else
// connection_init's payload's in each shape clients send it: one key,
// whatever the order of the payload's members; an empty value is none;
// two keys that differ are refused (4403), as is a key that is not a
// string or a payload that is not an object (4400).
func TestConnectionKey(t *testing.T) {
	for _, tc := range []struct {
		name, header, payload string
		want                  string
		code                  int // 0: accepted
	}{
		{"X-Api-Key", "", `{"X-Api-Key":"k1"}`, "k1", 0},
		{"any case", "", `{"x-api-key":"k2"}`, "k2", 0},
		{"headers", "", `{"headers":{"X-API-KEY":"k3"}}`, "k3", 0},
		{"apiKey", "", `{"apiKey":"k4"}`, "k4", 0},
		{"none: the header", "h", `{"Authorization":"Bearer x"}`, "h", 0},
		{"no payload: the header", "h", ``, "h", 0},
		{"null payload: the header", "h", `null`, "h", 0},
		{"the same key twice", "", `{"X-Api-Key":"k","apiKey":"k","headers":{"x-api-key":"k"}}`, "k", 0},
		{"the header and the same key", "k", `{"apiKey":"k"}`, "k", 0},
		{"an empty key does not hide the header's", "h", `{"X-Api-Key":""}`, "h", 0},
		{"an empty key beside another", "", `{"X-Api-Key":"","apiKey":"k"}`, "k", 0},
		{"two keys", "", `{"X-Api-Key":"a","apiKey":"b"}`, "", closeForbidden},
		{"two spellings", "", `{"X-Api-Key":"a","x-api-key":"b"}`, "", closeForbidden},
		{"the header and another key", "h", `{"apiKey":"k"}`, "", closeForbidden},
		{"headers and another key", "", `{"apiKey":"a","headers":{"X-Api-Key":"b"}}`, "", closeForbidden},
		{"not a string", "", `{"apiKey":4}`, "", closeBadRequest},
		{"not an object", "", `"k"`, "", closeBadRequest},
	} {
		for range 20 { // map order varies from run to run: the answer must not
			got, refused := connectionKey(tc.header, json.RawMessage(tc.payload))
			code := 0
			if refused != nil {
				code = refused.code
			}
			if got != tc.want || code != tc.code {
				t.Fatalf("%s: %q (close %d), want %q (close %d)", tc.name, got, code, tc.want, tc.code)
			}
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
