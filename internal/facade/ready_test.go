package facade_test

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/restclient"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// readyFacade returns the facade in front of the upstream at baseURL, with
// the clock of its readiness cache.
func readyFacade(t *testing.T, baseURL string, timeout time.Duration, demo bool) (*httptest.Server, *fakeClock) {
	t.Helper()
	client, err := restclient.New(baseURL, restclient.WithHTTPClient(&http.Client{Timeout: timeout}))
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)}
	srv := httptest.NewServer(facade.New(facade.Config{Upstream: client, Log: slog.New(slog.DiscardHandler), Now: clock.now, Demo: demo}))
	t.Cleanup(srv.Close)
	return srv, clock
}

type readyAnswer struct {
	status int
	Status string `json:"status"`
	Mode   string `json:"mode"`
	// Circuit is the upstream breaker's state (verbose).
	Circuit *struct {
		State string `json:"state"`
	} `json:"circuit"`
	// Upstream holds what the probe found.
	Upstream struct {
		Reason    string    `json:"reason"`
		CheckedAt time.Time `json:"checkedAt"`
	} `json:"upstream"`
}

func getReadyz(t *testing.T, srv *httptest.Server) readyAnswer {
	t.Helper()
	return getReadyzAt(t, srv, "/readyz?verbose")
}

// getReadyzAt GETs path (/readyz, with or without ?verbose).
func getReadyzAt(t *testing.T, srv *httptest.Server, path string) readyAnswer {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
	r := send(t, req)
	var a readyAnswer
	if err := jsonUnmarshal([]byte(r.raw), &a); err != nil || r.contentType != "application/json" || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("GET /readyz: %d %s %q (Cache-Control %q): %v", r.status, r.contentType, r.raw, r.header.Get("Cache-Control"), err)
	}
	a.status = r.status
	return a
}

// With a Sure server upstream /readyz?verbose answers ready with what a
// probe found, a probe that spends no key (the fake records the key of
// each request), and a probe answers for ReadinessTTL.
func TestReadyz_Sure(t *testing.T) {
	t.Parallel()
	fake := restclienttest.New()
	up := httptest.NewServer(fake)
	t.Cleanup(up.Close)
	srv, clock := readyFacade(t, up.URL, 5*time.Second, false)

	a := getReadyz(t, srv)
	if a.status != http.StatusOK || a.Status != "ready" || a.Mode != "upstream" || a.Upstream.Reason != "" || !a.Upstream.CheckedAt.Equal(clock.now()) {
		t.Errorf("GET /readyz = %+v, want 200 ready, mode upstream, no reason, checked now (%s)", a, clock.now())
	}
	clock.advance(facade.ReadinessTTL - time.Second)
	if a := getReadyz(t, srv); a.status != http.StatusOK || fake.Calls() != 1 {
		t.Errorf("within the TTL: %+v after %d probes, want the first probe's answer", a, fake.Calls())
	}
	clock.advance(time.Second)
	if a := getReadyz(t, srv); a.status != http.StatusOK || fake.Calls() != 2 || !a.Upstream.CheckedAt.Equal(clock.now()) {
		t.Errorf("after the TTL: %+v after %d probes, want a new probe", a, fake.Calls())
	}
	for _, r := range fake.Requests() {
		if r.APIKey != "" || r.Method != http.MethodGet || r.Path != "/api/v1/categories" || r.RawQuery != "per_page=1" {
			t.Errorf("the probe sent %+v, want GET /api/v1/categories?per_page=1 without a key", r)
		}
	}
}

// Whatever keeps the upstream from being a Sure server that answers shows
// in /readyz?verbose with the reason, and readiness stays 200: a Sure
// outage must not take every replica out of the load balancer.
func TestReadyz_Unavailable(t *testing.T) {
	// Not parallel: it wants a port it closed to stay closed. Only the
	// upstream that never answers is given a short timeout (it must fire);
	// the others answer, however slowly a busy machine lets them.
	serve := func(h http.HandlerFunc) string {
		s := httptest.NewServer(h)
		t.Cleanup(s.Close)
		return s.URL
	}
	closed := func() string {
		ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = ln.Close() }()
		return "http://" + ln.Addr().String()
	}
	tests := []struct {
		name       string
		baseURL    string
		wantReason string
		timeout    time.Duration // 0: 10 s
	}{
		{"nothing listens", closed(), restclient.ReasonConnectionRefused, 0},
		{"no answer in time", serve(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }), restclient.ReasonTimeout, 100 * time.Millisecond},
		{"a web site, not Sure", serve(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html><body>Welcome</body></html>"))
		}), restclient.ReasonNotSure, 0},
		{"a proxy answering 502", serve(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
		}), restclient.ReasonBadGateway, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			srv, _ := readyFacade(t, tc.baseURL, timeout, false)
			a := getReadyz(t, srv)
			if a.status != http.StatusOK || a.Status != "ready" || a.Upstream.Reason != tc.wantReason || a.Mode != "upstream" {
				t.Errorf("GET /readyz?verbose = %+v, want 200 ready with the upstream's reason %q", a, tc.wantReason)
			}
			if a := getReadyzAt(t, srv, "/readyz"); a.status != http.StatusOK || a.Status != "ready" {
				t.Errorf("GET /readyz = %+v, want 200 ready", a)
			}
		})
	}
}

func TestReadyz_DemoMode(t *testing.T) {
	t.Parallel()
	up := httptest.NewServer(restclienttest.New())
	t.Cleanup(up.Close)
	srv, _ := readyFacade(t, up.URL, 5*time.Second, true)
	if a := getReadyz(t, srv); a.status != http.StatusOK || a.Mode != "demo" {
		t.Errorf("GET /readyz = %+v, want 200, mode demo", a)
	}
}

// Plain /readyz is the process's own state: it asks the upstream nothing,
// and answers 503 shutting_down once the server drains (Draining closed).
func TestReadyz_ProcessState(t *testing.T) {
	t.Parallel()
	fake := restclienttest.New()
	up := httptest.NewServer(fake)
	t.Cleanup(up.Close)
	client, err := restclient.New(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	draining := make(chan struct{})
	srv := httptest.NewServer(facade.New(facade.Config{Upstream: client, Log: slog.New(slog.DiscardHandler), Draining: draining}))
	t.Cleanup(srv.Close)
	if a := getReadyzAt(t, srv, "/readyz"); a.status != http.StatusOK || a.Status != "ready" || a.Mode != "upstream" || fake.Calls() != 0 {
		t.Errorf("GET /readyz = %+v after %d upstream calls, want 200 ready and no call", a, fake.Calls())
	}
	close(draining)
	for _, path := range []string{"/readyz", "/readyz?verbose"} {
		if a := getReadyzAt(t, srv, path); a.status != http.StatusServiceUnavailable || a.Status != "shutting_down" {
			t.Errorf("GET %s while draining = %+v, want 503 shutting_down", path, a)
		}
	}
}
