package restclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// What an answer says of its key, read from answers as the client saw
// them: Sure authenticates first and sends its rate-limit reading with
// every authenticated answer, so a 2xx of the Sure API or any answer with
// a reading accepts the key, a 401 rejects it, and the rest (a routing
// 404, a proxy's page, a 2xx that is no answer of the Sure API, no
// answer) says nothing of it.
func TestCall_KeyVerdict(t *testing.T) {
	t.Parallel()
	const reading = "reading"
	for _, tc := range []struct {
		name   string
		status int // 0: the connection fails
		json   bool
		extra  string // reading: the app's X-RateLimit-* headers
		want   KeyVerdict
	}{
		{"a read", 200, true, reading, KeyAccepted},
		{"a read without a reading", 200, true, "", KeyAccepted},
		{"a DELETE", 204, false, reading, KeyAccepted},
		{"a 2xx that is no answer of the Sure API", 200, false, "", KeyUnjudged},
		{"an unknown id", 404, true, reading, KeyAccepted},
		{"a path the router lacks", 404, true, "", KeyUnjudged},
		{"a read-only key's write", 403, true, reading, KeyAccepted},
		{"a blank title", 422, true, reading, KeyAccepted},
		{"out of quota", 429, true, reading, KeyAccepted},
		{"a proxy's 429", 429, false, "", KeyUnjudged},
		{"the app's 500", 500, true, reading, KeyAccepted},
		{"a gateway's 503", 503, false, "", KeyUnjudged},
		{"a key Sure does not know", 401, true, "", KeyRejected},
		{"no answer", 0, false, "", KeyUnjudged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var calls []Call
			c, err := New("https://sure.example.com", WithRetryPolicy(RetryPolicy{}), WithHTTPClient(&http.Client{
				Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
					if tc.status == 0 {
						return nil, errors.New("connection refused")
					}
					h := http.Header{"Content-Type": {"text/html"}}
					body := "<html>no</html>"
					if tc.json {
						h.Set("Content-Type", "application/json")
						body = `{"error":"x","message":"y","categories":[],"pagination":{"page":1,"per_page":1,"total_count":0,"total_pages":1}}`
					}
					if tc.extra == reading {
						h.Set("X-RateLimit-Limit", "100")
						h.Set("X-RateLimit-Remaining", "42")
						h.Set("X-RateLimit-Reset", "60")
					}
					return &http.Response{StatusCode: tc.status, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: req, ContentLength: -1}, nil
				}),
			}))
			if err != nil {
				t.Fatal(err)
			}
			c = c.WithAPIKey("k").WithObserver(func(_ context.Context, call Call) { calls = append(calls, call) })
			_, _ = c.ListCategories(t.Context(), ListCategoriesOptions{Page: 1, PerPage: 1})
			if len(calls) != 1 {
				t.Fatalf("%d calls observed, want 1", len(calls))
			}
			if got := calls[0].KeyVerdict(); got != tc.want {
				t.Errorf("status %d: verdict %d, want %d (call %+v)", tc.status, got, tc.want, calls[0])
			}
		})
	}
}
