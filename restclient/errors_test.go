package restclient

import (
	"context"
	"errors"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fixedNow is the clock of the rate-limit tests.
var fixedNow = time.Date(2026, 1, 10, 11, 40, 0, 0, time.UTC)

func fixedClock() time.Time { return fixedNow }

const proxyHTML = "<html><head><title>502 Bad Gateway</title></head><body><center><h1>Bad Gateway</h1></center><hr><center>nginx</center></body></html>"

// errorKind names the error type an answer must map to.
type errorKind int

const (
	kindAPI errorKind = iota
	kindRateLimit
	kindUnavailable
)

func (k errorKind) String() string {
	return [...]string{"*APIError", "*RateLimitError", "*UnavailableError"}[k]
}

func TestClient_ErrorAnswers(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		contentType string // default application/json
		header      http.Header
		body        string

		kind           errorKind
		wantAPI        APIError // Op is not compared
		wantRetryAfter time.Duration
		wantStatus     int // of an *UnavailableError
		wantNotFound   bool
	}{
		{
			name: "401 unauthorized", status: 401,
			body:    `{"error":"unauthorized","message":"Access token or API key is invalid, expired, or missing"}`,
			kind:    kindAPI,
			wantAPI: APIError{StatusCode: 401, Code: "unauthorized", Message: "Access token or API key is invalid, expired, or missing"},
		},
		{
			name: "403 insufficient scope", status: 403,
			body:    `{"error":"insufficient_scope","message":"This action requires the 'write' scope"}`,
			kind:    kindAPI,
			wantAPI: APIError{StatusCode: 403, Code: "insufficient_scope", Message: "This action requires the 'write' scope"},
		},
		{
			name: "403 feature disabled", status: 403,
			body:    `{"error":"feature_disabled","message":"AI features are not enabled for this user"}`,
			kind:    kindAPI,
			wantAPI: APIError{StatusCode: 403, Code: "feature_disabled", Message: "AI features are not enabled for this user"},
		},
		{
			name: "404 chat shape without message", status: 404,
			header:  http.Header{"X-Ratelimit-Limit": {"100"}},
			body:    `{"error":"Chat not found"}`,
			kind:    kindAPI,
			wantAPI: APIError{StatusCode: 404, Code: "Chat not found"}, wantNotFound: true,
		},
		{
			name: "404 not_found shape", status: 404,
			header:  http.Header{"X-Ratelimit-Limit": {"Infinity"}},
			body:    `{"error":"not_found","message":"Category not found"}`,
			kind:    kindAPI,
			wantAPI: APIError{StatusCode: 404, Code: "not_found", Message: "Category not found"}, wantNotFound: true,
		},
		{
			// The router's 404 (an endpoint the server's version lacks):
			// no controller ran, so no rate-limit header.
			name: "404 of the router, without rate-limit headers", status: 404,
			body:    `{"status":404,"error":"Not Found"}`,
			kind:    kindAPI,
			wantAPI: APIError{StatusCode: 404, Code: "Not Found", NoRoute: true}, wantNotFound: true,
		},
		{
			name: "422 with details", status: 422,
			body:    `{"error":"Failed to create chat","details":["Title can't be blank","Title is too short"]}`,
			kind:    kindAPI,
			wantAPI: APIError{StatusCode: 422, Code: "Failed to create chat", Details: []string{"Title can't be blank", "Title is too short"}},
		},
		{
			name: "422 with details of an unknown shape", status: 422,
			body:    `{"error":"Failed to update chat","details":{"title":["can't be blank"]}}`,
			kind:    kindAPI,
			wantAPI: APIError{StatusCode: 422, Code: "Failed to update chat"},
		},
		{
			name: "429 with Retry-After and rate-limit headers", status: 429,
			header: http.Header{
				"Retry-After":           {"42"},
				"X-Ratelimit-Limit":     {"100"},
				"X-Ratelimit-Remaining": {"0"},
				"X-Ratelimit-Reset":     {"42"},
			},
			body: `{"error":"rate_limit_exceeded","message":"Rate limit exceeded. Try again in 42 seconds.",
				"details":{"limit":100,"current":100,"reset_in_seconds":42}}`,
			kind:           kindRateLimit,
			wantAPI:        APIError{StatusCode: 429, Code: "rate_limit_exceeded", Message: "Rate limit exceeded. Try again in 42 seconds."},
			wantRetryAfter: 42 * time.Second,
		},
		{
			name: "429 from a proxy with an HTML body", status: 429, contentType: "text/html",
			header:         http.Header{"Retry-After": {"7"}},
			body:           "<html><body>Too Many Requests</body></html>",
			kind:           kindRateLimit,
			wantAPI:        APIError{StatusCode: 429},
			wantRetryAfter: 7 * time.Second,
		},
		{
			name: "500 JSON", status: 500,
			body: `{"error":"internal_server_error","message":"An unexpected error occurred"}`,
			kind: kindUnavailable, wantStatus: 500,
		},
		{name: "502 HTML", status: 502, contentType: "text/html", body: proxyHTML, kind: kindUnavailable, wantStatus: 502},
		{name: "503 HTML", status: 503, contentType: "text/html", body: proxyHTML, kind: kindUnavailable, wantStatus: 503},
		{name: "504 HTML", status: 504, contentType: "text/html", body: proxyHTML, kind: kindUnavailable, wantStatus: 504},
		{name: "503 empty body", status: 503, contentType: "text/plain", body: "", kind: kindUnavailable, wantStatus: 503},
		{name: "200 HTML", status: 200, contentType: "text/html; charset=utf-8", body: "<!DOCTYPE html><html><body>Sign in</body></html>", kind: kindUnavailable, wantStatus: 200},
	}
	calls := []struct {
		name string
		do   func(ctx context.Context, c *Client) error
	}{
		{name: "GET", do: func(ctx context.Context, c *Client) error { _, err := c.GetCategory(ctx, catID); return err }},
		{name: "POST", do: func(ctx context.Context, c *Client) error {
			_, err := c.CreateChat(ctx, CreateChatRequest{Title: "t"})
			return err
		}},
	}
	for _, tt := range tests {
		for _, call := range calls {
			t.Run(tt.name+"/"+call.name, func(t *testing.T) {
				u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
					for k, v := range tt.header {
						w.Header()[k] = v
					}
					w.Header().Set("Content-Type", cmpOr(tt.contentType, "application/json; charset=utf-8"))
					w.WriteHeader(tt.status)
					_, _ = w.Write([]byte(tt.body))
				})
				// Retries are off (see upstream.client): one answer, one error.
				err := call.do(t.Context(), u.client(t, WithClock(fixedClock)))
				if err == nil {
					t.Fatal("error = nil, want one")
				}
				if strings.Contains(err.Error(), testKey) {
					t.Errorf("error %q contains the API key", err)
				}
				if got := IsNotFound(err); got != tt.wantNotFound {
					t.Errorf("IsNotFound(%v) = %t, want %t", err, got, tt.wantNotFound)
				}
				var (
					api *APIError
					rl  *RateLimitError
					ue  *UnavailableError
				)
				switch tt.kind {
				case kindAPI, kindRateLimit:
					if errors.As(err, &ue) {
						t.Errorf("error = %T %v, want %s", err, err, tt.kind)
					}
					if (tt.kind == kindRateLimit) != errors.As(err, &rl) {
						t.Fatalf("error = %T %v, want %s", err, err, tt.kind)
					}
					if !errors.As(err, &api) {
						t.Fatalf("error = %T %v, want one errors.As finds an *APIError in", err, err)
					}
					if api.Op == "" || !strings.HasPrefix(api.Op, call.name+" /") {
						t.Errorf("APIError.Op = %q, want %q followed by the path", api.Op, call.name+" /")
					}
					got := *api
					got.Op = ""
					if !reflect.DeepEqual(got, tt.wantAPI) {
						t.Errorf("APIError = %+v, want %+v", got, tt.wantAPI)
					}
					if rl != nil && rl.RetryAfter != tt.wantRetryAfter {
						t.Errorf("RetryAfter = %s, want %s", rl.RetryAfter, tt.wantRetryAfter)
					}
				case kindUnavailable:
					if !errors.As(err, &ue) {
						t.Fatalf("error = %T %v, want *UnavailableError", err, err)
					}
					if errors.As(err, &api) {
						t.Errorf("errors.As(%v, *APIError) = true, want false", err)
					}
					if ue.Status != tt.wantStatus {
						t.Errorf("UnavailableError.Status = %d, want %d", ue.Status, tt.wantStatus)
					}
					if ue.Err == nil {
						t.Error("UnavailableError.Err = nil, want the cause")
					}
				}
				if n := u.count(); n != 1 {
					t.Errorf("requests = %d, want 1", n)
				}
			})
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func TestAPIError_Error(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{err: &APIError{Op: "GET /chats/x", StatusCode: 404, Code: "Chat not found"}, want: "restclient: GET /chats/x: 404 Chat not found"},
		{err: &APIError{Op: "GET /categories", StatusCode: 401, Code: "unauthorized", Message: "bad key"}, want: "restclient: GET /categories: 401 bad key"},
		{err: &RateLimitError{APIError: APIError{Op: "GET /chats", StatusCode: 429}, RetryAfter: 90 * time.Second}, want: "restclient: GET /chats: rate limited, retry after 1m30s"},
		{err: &UnavailableError{Op: "GET /chats", Status: 503, Err: errors.New("status 503")}, want: "restclient: GET /chats: upstream unavailable (status 503): status 503"},
		{err: &UnavailableError{Op: "GET /chats", Err: errors.New("dial tcp: refused")}, want: "restclient: GET /chats: upstream unavailable: dial tcp: refused"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestClient_RateLimitRetryAfter(t *testing.T) {
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{name: "seconds", header: http.Header{"Retry-After": {"120"}}, want: 120 * time.Second},
		{name: "seconds with spaces", header: http.Header{"Retry-After": {" 5 "}}, want: 5 * time.Second},
		{name: "zero", header: http.Header{"Retry-After": {"0"}}, want: 0},
		{name: "HTTP date", header: http.Header{"Retry-After": {fixedNow.Add(90 * time.Second).Format(http.TimeFormat)}}, want: 90 * time.Second},
		{name: "HTTP date in the past", header: http.Header{"Retry-After": {fixedNow.Add(-time.Hour).Format(http.TimeFormat)}}, want: 0},
		{name: "missing, falls back to X-RateLimit-Reset", header: http.Header{"X-Ratelimit-Limit": {"100"}, "X-Ratelimit-Reset": {"600"}}, want: 600 * time.Second},
		{name: "junk, falls back to X-RateLimit-Reset", header: http.Header{"Retry-After": {"soon"}, "X-Ratelimit-Limit": {"100"}, "X-Ratelimit-Reset": {"30"}}, want: 30 * time.Second},
		{name: "negative, falls back to X-RateLimit-Reset", header: http.Header{"Retry-After": {"-5"}, "X-Ratelimit-Limit": {"100"}, "X-Ratelimit-Reset": {"30"}}, want: 30 * time.Second},
		{name: "nothing usable", header: http.Header{"Retry-After": {"soon"}}, want: time.Minute},
		{name: "no headers", header: http.Header{}, want: time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.header {
					w.Header()[k] = v
				}
				reply(w, http.StatusTooManyRequests, `{"error":"rate_limit_exceeded","message":"Rate limit exceeded."}`)
			})
			_, err := u.client(t, WithClock(fixedClock)).ListChats(t.Context(), 1)
			var rl *RateLimitError
			if !errors.As(err, &rl) {
				t.Fatalf("error = %T %v, want *RateLimitError", err, err)
			}
			if rl.RetryAfter != tt.want {
				t.Errorf("RetryAfter = %s, want %s", rl.RetryAfter, tt.want)
			}
		})
	}
}

// TestRetryAfter_Huge pins that an absurd Retry-After never yields a
// negative wait (the facade shows ceil(RetryAfter.Seconds()) to callers).
func TestRetryAfter_Huge(t *testing.T) {
	for _, v := range []string{"9223372037", "10000000000", strconv.Itoa(math.MaxInt)} {
		t.Run(v, func(t *testing.T) {
			if got := retryAfter(http.Header{"Retry-After": {v}}, fixedNow); got < 0 {
				t.Errorf("retryAfter(Retry-After: %s) = %s, want >= 0", v, got)
			}
		})
	}
}

func TestParseRateLimit(t *testing.T) {
	tests := []struct {
		name   string
		header http.Header
		want   *RateLimit
	}{
		{
			name:   "all three",
			header: http.Header{"X-Ratelimit-Limit": {"100"}, "X-Ratelimit-Remaining": {"57"}, "X-Ratelimit-Reset": {"1200"}},
			want:   &RateLimit{Limit: 100, Remaining: 57, Reset: 1200 * time.Second, ResetAt: fixedNow.Add(20 * time.Minute)},
		},
		{
			name:   "reset is seconds until reset, not an epoch",
			header: http.Header{"X-Ratelimit-Limit": {"1000"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1"}},
			want:   &RateLimit{Limit: 1000, Remaining: 0, Reset: time.Second, ResetAt: fixedNow.Add(time.Second)},
		},
		{name: "no headers", header: http.Header{}, want: nil},
		{name: "no limit", header: http.Header{"X-Ratelimit-Remaining": {"57"}, "X-Ratelimit-Reset": {"1200"}}, want: nil},
		{name: "junk limit", header: http.Header{"X-Ratelimit-Limit": {"many"}}, want: nil},
		{
			name:   "only the limit",
			header: http.Header{"X-Ratelimit-Limit": {"100"}},
			want:   &RateLimit{Limit: 100, Remaining: -1},
		},
		{
			name:   "spaces",
			header: http.Header{"X-Ratelimit-Limit": {" 100 "}, "X-Ratelimit-Remaining": {" 3"}, "X-Ratelimit-Reset": {"60 "}},
			want:   &RateLimit{Limit: 100, Remaining: 3, Reset: time.Minute, ResetAt: fixedNow.Add(time.Minute)},
		},
		{
			name:   "junk and negative reset are ignored",
			header: http.Header{"X-Ratelimit-Limit": {"100"}, "X-Ratelimit-Remaining": {"x"}, "X-Ratelimit-Reset": {"-3"}},
			want:   &RateLimit{Limit: 100, Remaining: -1},
		},
		{
			// A self-hosted Sure: no limit, and no number to show.
			name:   "self-hosted: Infinity",
			header: http.Header{"X-Ratelimit-Limit": {"Infinity"}, "X-Ratelimit-Remaining": {"Infinity"}, "X-Ratelimit-Reset": {"0"}},
			want:   &RateLimit{Unlimited: true, Limit: -1, Remaining: -1},
		},
		{name: "negative limit", header: http.Header{"X-Ratelimit-Limit": {"-1"}}, want: nil},
		{
			name:   "epoch-sized reset is ignored",
			header: http.Header{"X-Ratelimit-Limit": {"100"}, "X-Ratelimit-Remaining": {"9"}, "X-Ratelimit-Reset": {"9999999999"}},
			want:   &RateLimit{Limit: 100, Remaining: 9},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseRateLimit(tt.header, fixedNow); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseRateLimit = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// FuzzRateLimitHeaders checks that the header parsers never panic and never
// produce a negative wait.
func FuzzRateLimitHeaders(f *testing.F) {
	f.Add("100", "57", "1200", "42")
	f.Add("", "", "", "")
	f.Add(" 100", "-1", "2147483647", fixedNow.Format(http.TimeFormat))
	f.Add("1e3", "x", "-5", "Wed, 21 Oct 2015 07:28:00 GMT")
	f.Add("9223372036854775807", "9223372036854775808", "99999999999999999999", "-0")
	f.Fuzz(func(t *testing.T, limit, remaining, reset, after string) {
		h := http.Header{
			"X-Ratelimit-Limit":     {limit},
			"X-Ratelimit-Remaining": {remaining},
			"X-Ratelimit-Reset":     {reset},
			"Retry-After":           {after},
		}
		if rl := parseRateLimit(h, fixedNow); rl != nil {
			if rl.Reset < 0 || rl.ResetAt.Before(fixedNow.Truncate(time.Second)) && !rl.ResetAt.IsZero() {
				t.Fatalf("parseRateLimit(%q) = %+v, want Reset >= 0 and ResetAt not before now", h, rl)
			}
		}
		if d := retryAfter(h, fixedNow); d < 0 {
			t.Fatalf("retryAfter(%q) = %s, want >= 0", h, d)
		}
	})
}
