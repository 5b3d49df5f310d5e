package restclienttest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

func TestFailNext(t *testing.T) {
	const page = "<html><body>503 Service Unavailable</body></html>"
	s := newFixed()
	s.FailNext("/api/v1/chats", 2, http.StatusServiceUnavailable, "text/html", page)

	wantStatus(t, get(t, s, "/api/v1/categories", DemoKey), http.StatusOK) // another prefix

	for i, method := range []string{http.MethodPost, http.MethodGet} {
		rec := serve(t, s, method, "/api/v1/chats", DemoKey, withBody("application/json", `{"title":"Lost"}`))
		wantStatus(t, rec, http.StatusServiceUnavailable)
		if got := rec.Body.String(); got != page {
			t.Errorf("failure %d body: got %q, want %q", i, got, page)
		}
		if got := rec.Header().Get("Content-Type"); got != "text/html" {
			t.Errorf("failure %d Content-Type: got %q, want text/html", i, got)
		}
		if got := rec.Header().Get("X-RateLimit-Limit"); got != "" {
			t.Errorf("failure %d X-RateLimit-Limit: got %q, want none (a proxy answered)", i, got)
		}
	}
	if got := len(s.Chats(DemoKey)); got != 4 {
		t.Errorf("chats: got %d, want 4 (a failed POST creates nothing)", got)
	}
	wantStatus(t, get(t, s, "/api/v1/chats", DemoKey), http.StatusOK)

	var statuses []int
	for _, r := range s.Requests() {
		statuses = append(statuses, r.Status)
	}
	if want := []int{200, 503, 503, 200}; fmt.Sprint(statuses) != fmt.Sprint(want) {
		t.Errorf("recorded statuses: got %v, want %v", statuses, want)
	}
}

func TestFailNextCountsAgainstRateLimit(t *testing.T) {
	s := newFixed()
	s.SetRateLimit(DemoKey, 2)
	s.FailNext("/api/v1/", 2, http.StatusBadGateway, "text/html", "<html>502</html>")
	for range 2 {
		wantStatus(t, get(t, s, "/api/v1/categories", DemoKey), http.StatusBadGateway)
	}
	wantStatus(t, get(t, s, "/api/v1/categories", DemoKey), http.StatusTooManyRequests)
}

func TestFailNextOrder(t *testing.T) {
	s := newFixed()
	s.FailNext("/api/v1/chats", 0, http.StatusInternalServerError, "", "") // n <= 0: nothing
	s.FailNext("/api/v1/categories", 1, http.StatusBadGateway, "text/html", "first")
	s.FailNext("/api/v1/", 1, http.StatusGatewayTimeout, "text/html", "second")
	tests := []struct {
		target string
		want   int
	}{
		{"/api/v1/chats", http.StatusGatewayTimeout},
		{"/api/v1/categories", http.StatusBadGateway},
		{"/api/v1/categories", http.StatusOK},
	}
	for i, tt := range tests {
		if got := get(t, s, tt.target, DemoKey).Code; got != tt.want {
			t.Errorf("request %d to %s: got %d, want %d", i, tt.target, got, tt.want)
		}
	}
}

func TestDelayHonoursContext(t *testing.T) {
	s := newFixed()
	ts := httptest.NewServer(s)
	defer ts.Close()

	s.SetDelay(time.Minute)
	// The client gives up once the fake holds its request (recorded before
	// the delay): not after a fixed time, which a busy machine could spend
	// before the request even arrives.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for deadline := time.Now().Add(10 * time.Second); s.Calls() == 0 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/api/v1/categories", nil)
	req.Header.Set("X-Api-Key", DemoKey)
	start := time.Now()
	resp, err := ts.Client().Do(req)
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error: got %v, want the client's cancellation", err)
	}
	if elapsed := time.Since(start); elapsed > 30*time.Second {
		t.Errorf("elapsed: got %v, want the client's cancellation, not the minute's delay", elapsed)
	}
	// The upstream did the work: the request is recorded.
	if got := s.Calls(); got != 1 {
		t.Errorf("Calls: got %d, want 1", got)
	}

	s.SetDelay(20 * time.Millisecond)
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL+"/api/v1/categories", nil)
	req.Header.Set("X-Api-Key", DemoKey)
	start = time.Now()
	resp, err = ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status: got %d, want 200", resp.StatusCode)
	}
	if elapsed := time.Since(start); elapsed < 20*time.Millisecond {
		t.Errorf("elapsed: got %v, want at least the 20ms delay", elapsed)
	}
}

func TestRequestLog(t *testing.T) {
	s := newFixed()
	get(t, s, "/api/v1/categories?per_page=5&page=2", DemoKey)
	serve(t, s, http.MethodPost, "/api/v1/chats", ReadOnlyKey)
	get(t, s, "/api/v1/chats", NoAIKey)
	get(t, s, "/api/v1/chats", "") // recorded, not rate-limited

	want := []Request{
		{Method: "GET", Path: "/api/v1/categories", RawQuery: "per_page=5&page=2", APIKey: DemoKey, Status: 200},
		{Method: "POST", Path: "/api/v1/chats", APIKey: ReadOnlyKey, Status: 403},
		{Method: "GET", Path: "/api/v1/chats", APIKey: NoAIKey, Status: 403},
		{Method: "GET", Path: "/api/v1/chats", APIKey: "", Status: 401},
	}
	got := s.Requests()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Requests: got %+v, want %+v", got, want)
	}
	got[0].Status = 0 // a copy
	if s.Requests()[0].Status != 200 {
		t.Error("Requests: got the log itself, want a copy")
	}
	for key, wantCalls := range map[string]int{DemoKey: 1, ReadOnlyKey: 1, NoAIKey: 1, OtherFamilyKey: 0, "": 1} {
		if got := s.CallsFor(key); got != wantCalls {
			t.Errorf("CallsFor(%q): got %d, want %d", key, got, wantCalls)
		}
	}

	serve(t, s, http.MethodPost, "/api/v1/chats", DemoKey, withBody("application/json", `{"title":"Kept"}`))
	s.Reset()
	if got := s.Calls(); got != 0 {
		t.Errorf("Calls after Reset: got %d, want 0", got)
	}
	if got := s.Chats(DemoKey)[0].Title; got != "Kept" {
		t.Errorf("first chat after Reset: got %q, want %q (Reset keeps data)", got, "Kept")
	}
}

// TestConcurrentUse is for the race detector.
func TestConcurrentUse(t *testing.T) {
	s := New()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := httptest.NewRequest(http.MethodPost, "/api/v1/chats", nil)
			withBody("application/json", fmt.Sprintf(`{"title":"Chat %d"}`, i))(r)
			r.Header.Set("X-Api-Key", DemoKey)
			s.ServeHTTP(httptest.NewRecorder(), r)
			for _, target := range []string{"/api/v1/chats", "/api/v1/categories?roots_only=1", "/api/v1/categories?per_page=100"} {
				r := httptest.NewRequest(http.MethodGet, target, nil)
				r.Header.Set("X-Api-Key", []string{DemoKey, LargeFamilyKey}[i%2])
				s.ServeHTTP(httptest.NewRecorder(), r)
			}
			_ = s.Categories(LargeFamilyKey)
			_ = s.Calls()
		}()
	}
	wg.Wait()
	if got := len(s.Chats(DemoKey)); got != 20 {
		t.Errorf("chats: got %d, want 20", got)
	}
	if got := s.Calls(); got != 16*4 {
		t.Errorf("Calls: got %d, want %d", got, 16*4)
	}
}
