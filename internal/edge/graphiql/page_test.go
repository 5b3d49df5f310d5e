package graphiql

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The page may send requests to its own origin, and to its endpoint's when
// the endpoint is an absolute URL of another one; nothing else.
func TestPage_ConnectsToItsEndpointOnly(t *testing.T) {
	for endpoint, want := range map[string]string{
		"/graphql":                          "connect-src 'self';",
		"https://api.example.com/graphql":   "connect-src 'self' https://api.example.com;",
		"http://127.0.0.1:8080/graphql?x=1": "connect-src 'self' http://127.0.0.1:8080;",
		"javascript:alert(1)":               "connect-src 'self';",
	} {
		rec := httptest.NewRecorder()
		Page(PageConfig{Title: "t", Endpoint: endpoint, Assets: "/graphiql/"}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, want) {
			t.Errorf("endpoint %s: Content-Security-Policy %q, want %q", endpoint, csp, want)
		}
	}
}

// The inline script and style carry the answer's nonce, which is new for
// each answer, and the policy allows no other inline code.
func TestPage_InlineCodeCarriesTheNonce(t *testing.T) {
	h := Page(PageConfig{Title: "t", Endpoint: "/graphql", Assets: "/graphiql/", Notice: `<script>alert(1)</script>`})
	seen := map[string]bool{}
	for range 3 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		csp := rec.Header().Get("Content-Security-Policy")
		_, rest, ok := strings.Cut(csp, "script-src 'self' 'nonce-")
		nonce, _, _ := strings.Cut(rest, "'")
		if !ok || len(nonce) != 22 || seen[nonce] {
			t.Fatalf("Content-Security-Policy %q: want a nonce of 128 bits, new for each answer", csp)
		}
		seen[nonce] = true
		body := rec.Body.String()
		for _, tag := range []string{`<script nonce="` + nonce + `">`, `<style nonce="` + nonce + `">`} {
			if strings.Count(body, tag) != 1 {
				t.Errorf("the page has %d %s, want 1", strings.Count(body, tag), tag)
			}
		}
		if strings.Count(body, "<script") != 5 || strings.Contains(body, "<script>") {
			t.Errorf("the page has %d scripts (want its 4 files and its inline one) or one without the nonce", strings.Count(body, "<script"))
		}
		for _, loose := range []string{"unsafe-inline", "unsafe-eval", "*"} {
			if strings.Contains(csp, loose) {
				t.Errorf("Content-Security-Policy %q allows %s", csp, loose)
			}
		}
	}
}
