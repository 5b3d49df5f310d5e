package restclient_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/restclient"
)

// Probe tells a Sure server from anything else, and spends no key: the
// fake upstream records the key of every request.
func TestClient_Probe(t *testing.T) {
	answer := func(status int, contentType, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", contentType)
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}
	}
	tests := []struct {
		name       string
		handler    http.Handler // nil: nothing listens
		timeout    time.Duration
		wantReason string // "" when Probe returns nil
	}{
		{name: "Sure", handler: restclienttest.New()},
		{name: "nothing listens", wantReason: restclient.ReasonConnectionRefused},
		{name: "no answer in time", timeout: 50 * time.Millisecond, wantReason: restclient.ReasonTimeout,
			handler: http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })},
		{name: "proxy 502", handler: answer(502, "text/html", "<html>bad gateway</html>"), wantReason: restclient.ReasonBadGateway},
		{name: "the app's 500", handler: answer(500, "application/json", `{"error":"internal_server_error"}`), wantReason: restclient.ReasonServerError},
		{name: "a web page", handler: answer(200, "text/html", "<html>welcome</html>"), wantReason: restclient.ReasonNotSure},
		{name: "JSON for anybody", handler: answer(200, "application/json", `{"categories":[]}`), wantReason: restclient.ReasonNotSure},
		{name: "an HTML 401", handler: answer(401, "text/html", "<html>log in</html>"), wantReason: restclient.ReasonNotSure},
		{name: "a 401 of another API", handler: answer(401, "application/json", `{"error":"invalid_token"}`), wantReason: restclient.ReasonNotSure},
		{name: "a 404", handler: answer(404, "application/json", `{"error":"not_found"}`), wantReason: restclient.ReasonNotSure},
		{name: "a redirect", handler: http.RedirectHandler("https://elsewhere.example.com/", http.StatusFound), wantReason: restclient.ReasonNotSure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				base     string
				mu       sync.Mutex
				gotPaths []string
				gotKeys  []string
			)
			if tt.handler == nil {
				ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				base = "http://" + ln.Addr().String()
				_ = ln.Close()
			} else {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					gotPaths = append(gotPaths, r.URL.RequestURI())
					if k, ok := r.Header["X-Api-Key"]; ok {
						gotKeys = append(gotKeys, k...)
					}
					mu.Unlock()
					tt.handler.ServeHTTP(w, r)
				}))
				t.Cleanup(srv.Close)
				base = srv.URL
			}
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 5 * time.Second
			}
			c, err := restclient.New(base, restclient.WithHTTPClient(&http.Client{Timeout: timeout}))
			if err != nil {
				t.Fatal(err)
			}
			// A keyed client probes without its key all the same.
			err = c.WithAPIKey(restclienttest.DemoKey).Probe(t.Context())
			if got := reasonOf(err); got != tt.wantReason {
				t.Errorf("Probe() = %v (reason %q), want reason %q", err, got, tt.wantReason)
			}
			mu.Lock()
			defer mu.Unlock()
			if tt.handler != nil && (len(gotPaths) != 1 || gotPaths[0] != "/api/v1/categories?per_page=1") {
				t.Errorf("requests %v, want one GET /api/v1/categories?per_page=1", gotPaths)
			}
			if len(gotKeys) != 0 {
				t.Errorf("the probe sent X-Api-Key %q", gotKeys)
			}
		})
	}
}

func reasonOf(err error) string {
	if err == nil {
		return ""
	}
	return restclient.ProbeReason(err)
}

// The fake upstream counts the probe as an unauthenticated request: no
// key's quota.
func TestClient_Probe_SpendsNoKey(t *testing.T) {
	fake := restclienttest.New()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	c, err := restclient.New(srv.URL + "/api/v1/")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WithAPIKey(restclienttest.DemoKey).Probe(t.Context()); err != nil {
		t.Fatalf("Probe() = %v, want nil", err)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].APIKey != "" || reqs[0].Status != http.StatusUnauthorized {
		t.Errorf("the fake recorded %+v, want one request without a key, answered 401", reqs)
	}
}
