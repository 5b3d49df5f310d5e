package facade_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// retryAfterOf returns the largest extensions.retryAfter of an answer's
// errors, as Retry-After says it, and whether every error is RATE_LIMITED.
func retryAfterOf(t *testing.T, raw json.RawMessage) (string, bool) {
	t.Helper()
	var a struct {
		Errors []struct{ Extensions map[string]any }
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("answer %s: %v", raw, err)
	}
	most, all := -1.0, len(a.Errors) > 0
	for _, e := range a.Errors {
		if e.Extensions["code"] != "RATE_LIMITED" {
			all = false
		}
		if s, ok := e.Extensions["retryAfter"].(float64); ok && s > most {
			most = s
		}
	}
	return strconv.Itoa(int(most)), all
}

// An answer whose every error is RATE_LIMITED carries Retry-After, the
// largest extensions.retryAfter of its errors, in seconds, with status
// 200, by POST and by GET, and so does a batch whose every operation is
// refused so; an answer with another error, or none, and a batch with an
// operation answered, carry none.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.OtherFamilyKey
	e.upstream.SetRateLimit(key, 2)
	for range 2 { // spend the window
		e.ok(key, `{ categories(first: 1) { totalCount } }`, nil, nil)
	}
	const limited = `{ chats(first: 5) { totalCount } categories(first: 1) { totalCount } __typename }`
	const mixed = `{ chats(first: 5) { totalCount } category(id: "not-a-uuid") { name } }`
	post := func(key, body string) httpResult {
		return postJSON(t, e, body, map[string]string{"X-Api-Key": key})
	}
	get := func(key, query string) httpResult {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.server.URL+"/graphql?query="+url.QueryEscape(query), nil)
		req.Header.Set("X-Api-Key", key)
		return send(t, req)
	}
	body := func(q string) string { b, _ := json.Marshal(map[string]string{"query": q}); return string(b) }
	tests := []struct {
		name  string
		r     httpResult
		retry bool
	}{
		{"POST, every field rate-limited", post(key, body(limited)), true},
		{"GET, every field rate-limited", get(key, limited), true},
		{"GET again (its answer may be another's)", get(key, limited), true},
		{"POST, a rate limit and a bad argument", post(key, body(mixed)), false},
		{"GET, a rate limit and a bad argument", get(key, mixed), false},
		{"POST, no error", post(restclienttest.DemoKey, body(limited)), false},
		{"GET, no error", get(restclienttest.DemoKey, limited), false},
		{"batch, every operation rate-limited", post(key, "["+body(limited)+","+body(`{ chats(first: 1) { totalCount } }`)+"]"), true},
		{"batch, one operation answered", post(key, "["+body(limited)+","+body(`{ __typename }`)+"]"), false},
		{"batch, one operation answered first", post(key, "["+body(`{ __typename }`)+","+body(limited)+"]"), false},
		{"batch, another error", post(key, "["+body(limited)+","+body(mixed)+"]"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			if r.status != http.StatusOK {
				t.Fatalf("status %d, want 200: %s", r.status, r.raw)
			}
			got := r.header.Get("Retry-After")
			var answers []json.RawMessage
			if err := json.Unmarshal([]byte(r.raw), &answers); err != nil {
				answers = []json.RawMessage{json.RawMessage(r.raw)} // not a batch
			}
			want, all := "", true
			for _, a := range answers {
				secs, limited := retryAfterOf(t, a)
				all = all && limited
				if limited && (want == "" || len(secs) > len(want) || (len(secs) == len(want) && secs > want)) {
					want = secs
				}
			}
			if all != tc.retry {
				t.Fatalf("every error RATE_LIMITED = %v, want %v: %s", all, tc.retry, r.raw)
			}
			if !tc.retry {
				want = ""
			}
			if got != want {
				t.Errorf("Retry-After = %q, want %q (answer %s)", got, want, r.raw)
			}
			if tc.retry && (want == "" || want == "0" || want == "-1") {
				t.Errorf("retryAfter = %q, want the seconds until the window resets", want)
			}
		})
	}
}
