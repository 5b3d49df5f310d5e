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
		"/api/v1/chats/" + seedID("missing"),      // so does a chat's
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

// wantUnlimitedHeaders checks a self-hosted server's rate-limit headers.
func wantUnlimitedHeaders(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	for name, want := range map[string]string{
		"X-RateLimit-Limit":     "Infinity",
		"X-RateLimit-Remaining": "Infinity",
		"X-RateLimit-Reset":     "0",
	} {
		if got := rec.Header().Get(name); got != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
}

func TestUnlimited(t *testing.T) {
	tests := []struct {
		name  string
		setup func() *Server
		key   string
	}{
		{"SetRateLimit(Unlimited)", func() *Server {
			s := newFixed()
			s.SetRateLimit(ReadOnlyKey, Unlimited)
			return s
		}, ReadOnlyKey},
		{"WithUnlimited", func() *Server { return newFixedAs(Today, WithUnlimited()) }, OtherFamilyKey},
		{"WithUnlimited, Legacy", func() *Server { return newFixedAs(Legacy, WithUnlimited()) }, DemoKey},
		{"AddKey copies an unlimited key", func() *Server {
			s := newFixedAs(Today, WithUnlimited())
			s.AddKey("copy-key", LargeFamilyKey)
			return s
		}, "copy-key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.setup()
			targets := []string{"/api/v1/categories", "/api/v1/chats", "/api/v1/categories/" + seedID("missing")}
			for i := range 250 { // well past the standard tier's 100
				rec := get(t, s, targets[i%len(targets)], tt.key)
				if rec.Code == http.StatusTooManyRequests {
					t.Fatalf("request %d: got 429, want never", i)
				}
				if i%50 == 0 {
					wantUnlimitedHeaders(t, rec)
				}
			}
			// Across clock hours too, and with no Retry-After anywhere.
			s.SetClock(func() time.Time { return fixedNow.Add(2 * time.Hour) })
			rec := get(t, s, "/api/v1/categories", tt.key)
			wantStatus(t, rec, http.StatusOK)
			wantUnlimitedHeaders(t, rec)
			if got := rec.Header().Get("Retry-After"); got != "" {
				t.Errorf("Retry-After: got %q, want none", got)
			}
			// An endpoint's own error carries them as well.
			wantUnlimitedHeaders(t, get(t, s, "/api/v1/imports/junk", tt.key))
		})
	}
}

// Unlimited is per key: the others keep their tier, and a finite limit can
// be set again.
func TestUnlimitedIsPerKey(t *testing.T) {
	s := newFixed()
	s.SetRateLimit(DemoKey, Unlimited)
	wantUnlimitedHeaders(t, get(t, s, "/api/v1/categories", DemoKey))
	wantRateHeaders(t, get(t, s, "/api/v1/categories", ReadOnlyKey), 100, 99, 1242)

	s.SetRateLimit(DemoKey, 1)
	wantRateHeaders(t, get(t, s, "/api/v1/categories", DemoKey), 1, 0, 1242)
	wantStatus(t, get(t, s, "/api/v1/categories", DemoKey), http.StatusTooManyRequests)

	u := newFixedAs(Today, WithUnlimited())
	u.SetRateLimit(NoAIKey, 2)
	wantRateHeaders(t, get(t, u, "/api/v1/categories", NoAIKey), 2, 1, 1242)
	wantUnlimitedHeaders(t, get(t, u, "/api/v1/categories", DemoKey))
}

// Unauthenticated answers and routing errors carry no rate-limit header on
// an unlimited server either.
func TestUnlimitedUnauthenticated(t *testing.T) {
	s := newFixedAs(Today, WithUnlimited())
	for _, rec := range []*httptest.ResponseRecorder{
		get(t, s, "/api/v1/categories", "not-a-key"),
		get(t, s, "/api/v1/nowhere", DemoKey),
	} {
		wantNoRateHeaders(t, rec)
	}
}
