package restclienttest

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// wantRateHeaders checks the rate-limit headers of an authenticated answer.
func wantRateHeaders(t *testing.T, rec *httptest.ResponseRecorder, limit, remaining, reset int) {
	t.Helper()
	for name, want := range map[string]int{
		"X-RateLimit-Limit":     limit,
		"X-RateLimit-Remaining": remaining,
		"X-RateLimit-Reset":     reset,
	} {
		if got := rec.Header().Get(name); got != strconv.Itoa(want) {
			t.Errorf("%s: got %q, want %d", name, got, want)
		}
	}
}

func TestRateLimit(t *testing.T) {
	const reset = 1242 // fixedNow is 10:39:18: 20m42s to the end of the hour
	s := newFixed()
	s.SetRateLimit(DemoKey, 3)

	targets := []string{
		"/api/v1/categories",
		"/api/v1/categories/" + seedID("missing"), // a 404 counts too
		"/api/v1/nowhere",                         // so does an unknown route
	}
	for i, target := range targets {
		rec := get(t, s, target, DemoKey)
		wantRateHeaders(t, rec, 3, 2-i, reset)
	}

	rec := get(t, s, "/api/v1/categories", DemoKey)
	wantJSON(t, rec, http.StatusTooManyRequests,
		`{"error":"rate_limit_exceeded","message":"Rate limit exceeded. Try again in 1242 seconds.","details":{"limit":3,"current":3,"reset_in_seconds":1242}}`)
	if got := rec.Header().Get("Retry-After"); got != "1242" {
		t.Errorf("Retry-After: got %q, want %q", got, "1242")
	}
	wantRateHeaders(t, rec, 3, 0, reset)

	// Refused requests are recorded, but do not push "current" past the limit.
	rec = get(t, s, "/api/v1/chats", DemoKey)
	wantStatus(t, rec, http.StatusTooManyRequests)
	if got, want := s.Calls(), 5; got != want {
		t.Errorf("Calls: got %d, want %d", got, want)
	}
	if got := s.Requests()[4].Status; got != http.StatusTooManyRequests {
		t.Errorf("recorded status: got %d, want 429", got)
	}

	t.Run("other keys have their own window", func(t *testing.T) {
		wantRateHeaders(t, get(t, s, "/api/v1/categories", ReadOnlyKey), 100, 99, reset)
	})
	t.Run("next hour opens a new window", func(t *testing.T) {
		next := at("2026-01-15T11:00:00Z")
		s.SetClock(func() time.Time { return next })
		rec := get(t, s, "/api/v1/categories", DemoKey)
		wantStatus(t, rec, http.StatusOK)
		wantRateHeaders(t, rec, 3, 2, 3600)
		s.SetClock(func() time.Time { return fixedNow })
	})
	t.Run("Reset clears the windows", func(t *testing.T) {
		s.Reset()
		wantRateHeaders(t, get(t, s, "/api/v1/categories", DemoKey), 3, 2, reset)
	})
}

func TestRateLimitTiers(t *testing.T) {
	tests := []struct {
		key  string
		want int
	}{
		{DemoKey, 1000},
		{ReadOnlyKey, 100},
		{NoAIKey, 100},
		{OtherFamilyKey, 100},
		{LargeFamilyKey, 10000},
	}
	s := newFixed()
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			wantRateHeaders(t, get(t, s, "/api/v1/categories?per_page=1", tt.key), tt.want, tt.want-1, 1242)
		})
	}
}

func TestHitRateLimit(t *testing.T) {
	tests := []struct {
		name      string
		now       string
		wantReset int
	}{
		{"on the hour", "2026-01-15T10:00:00Z", 3600},
		{"last second", "2026-01-15T10:59:59Z", 1},
		{"sub-second is truncated", "2026-01-15T10:59:59.900Z", 1},
		{"before 1970", "1969-12-31T23:30:00Z", 1800},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := hitRateLimit(map[string]*rateWindow{}, "k", 10, at(tt.now))
			if st.reset != tt.wantReset || !st.allowed || st.count != 1 {
				t.Errorf("state: got %+v, want reset %d, allowed, count 1", st, tt.wantReset)
			}
		})
	}
}
