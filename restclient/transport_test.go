package restclient

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// At 64 concurrent calls, NewTransport reuses its connections: the upstream
// sees one new connection per concurrent caller, not one per call.
func TestNewTransport_ReusesConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("load run: skipped with -short")
	}
	const (
		concurrency = 64
		perCaller   = 200
	)
	var conns, requests atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		reply(w, http.StatusOK, `{"id":"`+catID+`","name":"Food","classification":"expense","color":"#f00","icon":"x","subcategories_count":0}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	transport := NewTransport(10 * time.Second)
	t.Cleanup(transport.CloseIdleConnections)
	c, err := New(srv.URL, WithHTTPClient(&http.Client{Transport: transport, Timeout: 10 * time.Second}), WithRetryPolicy(RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	c = c.WithAPIKey(testKey)

	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for range perCaller {
				if _, err := c.GetCategory(t.Context(), catID); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	n, opened := requests.Load(), conns.Load()
	reuse := 1 - float64(opened)/float64(n)
	t.Logf("%d calls at concurrency %d opened %d connections: %.2f%% reused", n, concurrency, opened, 100*reuse)
	if n != concurrency*perCaller {
		t.Fatalf("upstream saw %d calls, want %d", n, concurrency*perCaller)
	}
	if reuse < 0.99 {
		t.Errorf("%.2f%% of calls reused a connection, want at least 99%%", 100*reuse)
	}
}

func TestNewTransport_Settings(t *testing.T) {
	tr := NewTransport(7 * time.Second)
	if tr.MaxIdleConnsPerHost < 64 || tr.MaxIdleConns < tr.MaxIdleConnsPerHost {
		t.Errorf("idle connections: %d per host, %d in all; want a pool for the served concurrency", tr.MaxIdleConnsPerHost, tr.MaxIdleConns)
	}
	if !tr.ForceAttemptHTTP2 || tr.IdleConnTimeout <= 0 || tr.TLSHandshakeTimeout <= 0 || tr.ResponseHeaderTimeout != 7*time.Second {
		t.Errorf("transport = %+v", tr)
	}
	if tr.Proxy == nil || tr.DialContext == nil {
		t.Error("the default transport's proxy and dialer settings were lost")
	}
	if tr == http.DefaultTransport {
		t.Error("NewTransport returned the shared default transport")
	}
}

// WithTransport wraps the transport: the wrapper sees each attempt with
// its endpoint template and attempt number in the request's context, and
// the copy still refuses redirects (the key must not follow a Location).
func TestClient_WithTransport(t *testing.T) {
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(r.Header.Get("X-Api-Key"))
		reply(w, http.StatusOK, categoryJSON)
	}))
	t.Cleanup(other.Close)
	target := strings.Replace(other.URL, "127.0.0.1", "localhost", 1) + "/elsewhere"
	u := newUpstream(t, sequence(
		answer{status: http.StatusBadGateway, contentType: "text/html", body: proxyHTML},
		answer{status: http.StatusOK, body: categoryJSON},
	))
	var (
		mu   sync.Mutex
		seen []string
	)
	c := u.client(t, WithRetryPolicy(RetryPolicy{MaxRetries: 1})).WithTransport(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			endpoint, attempt, ok := RequestEndpoint(r.Context())
			mu.Lock()
			seen = append(seen, fmt.Sprintf("%s attempt %d %t", endpoint, attempt, ok))
			mu.Unlock()
			return next.RoundTrip(r)
		})
	})
	if _, err := c.GetCategory(t.Context(), catID); err != nil {
		t.Fatal(err)
	}
	want := []string{"GET /api/v1/categories/{id} attempt 0 true", "GET /api/v1/categories/{id} attempt 1 true"}
	if !slices.Equal(seen, want) {
		t.Errorf("the wrapper saw %q, want %q", seen, want)
	}
	if _, _, ok := RequestEndpoint(t.Context()); ok {
		t.Error("RequestEndpoint of a context the client did not make: ok")
	}

	redirecting := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, target, http.StatusFound) })
	wrapped := redirecting.client(t).WithTransport(func(next http.RoundTripper) http.RoundTripper { return next })
	_, _ = wrapped.GetCategory(t.Context(), catID)
	if got, _ := leaked.Load().(string); got != "" {
		t.Errorf("redirect target on another host received X-Api-Key %q, want no key", got)
	}
}
