package facade_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
)

const (
	appOrigin   = "https://app.example.com"
	otherOrigin = "https://evil.example.net"
)

// preflight sends the OPTIONS a browser sends before a cross-origin POST
// with an API key.
func preflight(t *testing.T, e *env, origin, method, headers string) httpResult {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodOptions, e.server.URL+"/graphql", nil)
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", method)
	if headers != "" {
		req.Header.Set("Access-Control-Request-Headers", headers)
	}
	return send(t, req)
}

// varies reports whether the answer says it depends on the Origin header.
func varies(r httpResult) bool {
	for _, v := range r.header.Values("Vary") {
		for f := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), "Origin") {
				return true
			}
		}
	}
	return false
}

func TestCORS_Preflight(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) {
		c.CORSOrigins = []string{appOrigin}
		c.CORSHeaders = []string{"X-Client-Version"}
	}))
	tests := []struct {
		name, origin, method, headers string
		allowed                       bool
	}{
		{"POST with a key", appOrigin, "POST", "content-type,x-api-key", true},
		{"POST with a request id", appOrigin, "POST", "content-type,x-api-key,x-request-id", true},
		{"GET", appOrigin, "GET", "x-api-key", true},
		// What browser SDKs add to every fetch: OpenTelemetry's trace
		// context and baggage, Sentry's trace, Apollo Client's client
		// awareness and CSRF-prevention headers.
		{"POST with OpenTelemetry", appOrigin, "POST", "baggage,content-type,traceparent,tracestate,x-api-key", true},
		{"POST with Sentry", appOrigin, "POST", "baggage,content-type,sentry-trace,x-api-key", true},
		{"POST from Apollo Client", appOrigin, "POST", "apollographql-client-name,apollographql-client-version,content-type,x-api-key", true},
		{"GET from Apollo Client", appOrigin, "GET", "apollo-require-preflight,x-api-key", true},
		{"a header added by -cors-headers", appOrigin, "POST", "content-type,x-api-key,x-client-version", true},
		{"another origin", otherOrigin, "POST", "content-type,x-api-key", false},
		{"a method not allowed", appOrigin, "PUT", "content-type", false},
		{"a header not allowed", appOrigin, "POST", "content-type,x-api-key,x-forwarded-for", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := preflight(t, e, tc.origin, tc.method, tc.headers)
			if r.status != http.StatusNoContent {
				t.Errorf("status = %d, want 204 (answered by CORS, not gqlgen)", r.status)
			}
			if !varies(r) {
				t.Errorf("Vary = %q, want Origin in it", r.header.Values("Vary"))
			}
			if cred := r.header.Get("Access-Control-Allow-Credentials"); cred != "" {
				t.Errorf("Access-Control-Allow-Credentials = %q, want none", cred)
			}
			got := r.header.Get("Access-Control-Allow-Origin")
			if !tc.allowed {
				if got != "" {
					t.Errorf("Access-Control-Allow-Origin = %q, want none", got)
				}
				return
			}
			if got != tc.origin {
				t.Errorf("Access-Control-Allow-Origin = %q, want %q", got, tc.origin)
			}
			if m := r.header.Get("Access-Control-Allow-Methods"); !strings.Contains(m, tc.method) {
				t.Errorf("Access-Control-Allow-Methods = %q, want %s", m, tc.method)
			}
			allowedHeaders := strings.ToLower(strings.Join(r.header.Values("Access-Control-Allow-Headers"), ","))
			for h := range strings.SplitSeq(tc.headers, ",") {
				if !slices.Contains(strings.Split(allowedHeaders, ","), h) {
					t.Errorf("Access-Control-Allow-Headers = %q, want %s in it", allowedHeaders, h)
				}
			}
			if age := r.header.Get("Access-Control-Max-Age"); age != "600" {
				t.Errorf("Access-Control-Max-Age = %q, want 600", age)
			}
		})
	}
	if n := e.upstream.Calls(); n != 0 {
		t.Errorf("upstream calls = %d, want 0", n)
	}
}

func TestCORS_ActualRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.CORSOrigins = []string{appOrigin} }))
	post := func(origin, contentType string) httpResult {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.server.URL+"/graphql",
			strings.NewReader(`{"query":"{ categories(first: 1) { totalCount } }"}`))
		req.Header.Set("Origin", origin)
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("X-Api-Key", restclienttest.DemoKey)
		return send(t, req)
	}
	r := post(appOrigin, "application/json")
	if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != appOrigin || !varies(r) || r.body["data"] == nil {
		t.Errorf("allowed origin: status %d, Allow-Origin %q, Vary %q, body %s", r.status, r.header.Get("Access-Control-Allow-Origin"), r.header.Values("Vary"), r.raw)
	}
	// The page may read the request id, to quote it when reporting a
	// fault, and the Retry-After of a rate-limited answer.
	exposed := strings.Split(strings.ToLower(strings.ReplaceAll(r.header.Get("Access-Control-Expose-Headers"), " ", "")), ",")
	if !slices.Contains(exposed, "x-request-id") || !slices.Contains(exposed, "retry-after") || r.header.Get("X-Request-Id") == "" {
		t.Errorf("Access-Control-Expose-Headers = %q (X-Request-Id %q), want X-Request-Id and Retry-After exposed", exposed, r.header.Get("X-Request-Id"))
	}
	// A refusal is readable by the page too.
	r = post(appOrigin, "text/plain")
	if r.status != http.StatusUnsupportedMediaType || r.header.Get("Access-Control-Allow-Origin") != appOrigin {
		t.Errorf("refusal: status %d, Allow-Origin %q", r.status, r.header.Get("Access-Control-Allow-Origin"))
	}
	// Another origin gets its answer (CORS is no access control: the key
	// is), but no header lets its page read it.
	r = post(otherOrigin, "application/json")
	if r.header.Get("Access-Control-Allow-Origin") != "" || !varies(r) {
		t.Errorf("other origin: Allow-Origin %q, Vary %q", r.header.Get("Access-Control-Allow-Origin"), r.header.Values("Vary"))
	}
	// A plain OPTIONS still reaches gqlgen.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodOptions, e.server.URL+"/graphql", nil)
	if r := send(t, req); r.status != http.StatusOK || r.header.Get("Allow") == "" {
		t.Errorf("plain OPTIONS: status %d, Allow %q", r.status, r.header.Get("Allow"))
	}
}

func TestCORS_AnyOrigin(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.CORSOrigins = []string{"*"} }))
	r := preflight(t, e, otherOrigin, "POST", "content-type,x-api-key")
	if r.status != http.StatusNoContent || r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("status %d, Allow-Origin %q; want 204, *", r.status, r.header.Get("Access-Control-Allow-Origin"))
	}
}

// Off by default: a preflight gets gqlgen's OPTIONS answer, which no
// browser takes as a permission.
func TestCORS_OffByDefault(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := preflight(t, e, appOrigin, "POST", "content-type,x-api-key")
	if got := r.header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("Access-Control-Allow-Origin = %q, want none", got)
	}
}
