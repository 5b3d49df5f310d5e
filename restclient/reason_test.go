package restclient_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/suregql/suregql/restclient"
)

// TestUnavailableError_Reason provokes each failure for real on loopback
// and checks what an operator is told to look at.
func TestUnavailableError_Reason(t *testing.T) {
	answer := func(status int, contentType, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", contentType)
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}
	}
	serve := func(t *testing.T, h http.Handler) string {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	tests := []struct {
		name       string
		baseURL    func(t *testing.T) string
		timeout    time.Duration
		transport  http.RoundTripper // nil: net/http's default
		wantReason string
		wantStatus int
	}{
		{name: "nothing listens", wantReason: restclient.ReasonConnectionRefused, baseURL: func(t *testing.T) string {
			ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			_ = ln.Close()
			return "http://" + addr
		}},
		{name: "host name does not resolve", wantReason: restclient.ReasonDNS, transport: noDNS(), baseURL: func(*testing.T) string {
			return "http://sure.invalid" // RFC 2606: never resolves
		}},
		{name: "certificate of an unknown authority", wantReason: restclient.ReasonTLS, baseURL: func(t *testing.T) string {
			srv := httptest.NewTLSServer(answer(200, "application/json", `{}`))
			t.Cleanup(srv.Close)
			return srv.URL
		}},
		{name: "no answer in time", timeout: 50 * time.Millisecond, wantReason: restclient.ReasonTimeout, baseURL: func(t *testing.T) string {
			return serve(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
		}},
		{name: "connection closed before the answer", wantReason: restclient.ReasonConnectionLost, baseURL: func(t *testing.T) string {
			return serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					_ = conn.Close()
				}
			}))
		}},
		{name: "proxy 503", wantReason: restclient.ReasonBadGateway, wantStatus: 503, baseURL: func(t *testing.T) string {
			return serve(t, answer(503, "text/html", "<html>down</html>"))
		}},
		{name: "the app's 500", wantReason: restclient.ReasonServerError, wantStatus: 500, baseURL: func(t *testing.T) string {
			return serve(t, answer(500, "application/json", `{"error":"internal_server_error"}`))
		}},
		{name: "a web page, not the API", wantReason: restclient.ReasonNotSure, wantStatus: 200, baseURL: func(t *testing.T) string {
			return serve(t, answer(200, "text/html", "<html>welcome</html>"))
		}},
		{name: "an HTML 404 (wrong path)", wantReason: restclient.ReasonNotSure, wantStatus: 404, baseURL: func(t *testing.T) string {
			return serve(t, answer(404, "text/html", "<html>not found</html>"))
		}},
		{name: "JSON of another shape", wantReason: restclient.ReasonNotSure, wantStatus: 200, baseURL: func(t *testing.T) string {
			return serve(t, answer(200, "application/json", `{"categories":"none"}`))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 5 * time.Second
			}
			c, err := restclient.New(tt.baseURL(t),
				restclient.WithHTTPClient(&http.Client{Timeout: timeout, Transport: tt.transport}),
				restclient.WithRetryPolicy(restclient.RetryPolicy{}))
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.WithAPIKey("key").ListCategories(t.Context(), restclient.ListCategoriesOptions{Page: 1, PerPage: 1})
			var ue *restclient.UnavailableError
			if !errors.As(err, &ue) {
				t.Fatalf("error = %v, want an *UnavailableError", err)
			}
			if got := ue.Reason(); got != tt.wantReason || ue.Status != tt.wantStatus {
				t.Errorf("Reason() = %q, status %d (error %v), want %q, status %d", got, ue.Status, err, tt.wantReason, tt.wantStatus)
			}
		})
	}
}

// noDNS returns a transport whose resolver has no server to ask, so a name
// lookup fails at once, on this machine, without any DNS traffic.
func noDNS() http.RoundTripper {
	resolver := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS server in this test")
	}}
	return &http.Transport{DialContext: (&net.Dialer{Resolver: resolver}).DialContext}
}
