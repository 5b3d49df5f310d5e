package facade_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// varyNames returns the names of an answer's Vary header, lower-cased, in
// order.
func varyNames(r httpResult) []string {
	var names []string
	for _, v := range r.header.Values("Vary") {
		for f := range strings.SplitSeq(v, ",") {
			names = append(names, strings.ToLower(strings.TrimSpace(f)))
		}
	}
	return names
}

// Answers of /graphql hold a user's financial data: no cache may keep them,
// and a GET answer (the kind a shared cache might keep anyway) varies by
// key, origin and media type.
func TestHTTP_CachingHeaders(t *testing.T) {
	t.Parallel()
	const query = `{ categories(first: 1) { totalCount } }`
	get := func(e *env, headers map[string]string) httpResult {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.server.URL+"/graphql?query="+url.QueryEscape(query), nil)
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		return send(t, req)
	}
	keyed := map[string]string{"X-Api-Key": restclienttest.DemoKey}
	plain := newEnv(t)
	withCORS := newEnv(t, withConfig(func(c *facade.Config) { c.CORSOrigins = []string{appOrigin} }))
	tests := []struct {
		name     string
		do       func() httpResult
		status   int
		wantVary bool
	}{
		{name: "POST", do: func() httpResult { return postJSON(t, plain, `{"query":"`+query+`"}`, keyed) }, status: 200},
		{name: "POST refused before GraphQL", do: func() httpResult {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, plain.server.URL+"/graphql", strings.NewReader(query))
			req.Header.Set("Content-Type", "text/plain")
			return send(t, req)
		}, status: http.StatusUnsupportedMediaType},
		{name: "POST with @defer, answered in parts", do: func() httpResult {
			body, _ := json.Marshal(map[string]any{"query": deferQuery})
			r := postJSON(t, plain, string(body), map[string]string{"X-Api-Key": restclienttest.DemoKey, "Accept": apolloAccept})
			if !strings.HasPrefix(r.contentType, "multipart/mixed") {
				t.Errorf("Content-Type %q, want multipart/mixed", r.contentType)
			}
			return r
		}, status: 200},
		{name: "POST without a key", do: func() httpResult { return postJSON(t, plain, `{"query":"`+query+`"}`, nil) }, status: 200},
		{name: "GET", do: func() httpResult { return get(plain, keyed) }, status: 200, wantVary: true},
		{name: "GET under graphql-response+json", do: func() httpResult {
			return get(plain, map[string]string{"X-Api-Key": restclienttest.DemoKey, "Accept": "application/graphql-response+json"})
		}, status: 200, wantVary: true},
		{name: "GET from a page, CORS on", do: func() httpResult {
			return get(withCORS, map[string]string{"X-Api-Key": restclienttest.DemoKey, "Origin": appOrigin})
		}, status: 200, wantVary: true},
		{name: "GET of a mutation, refused", do: func() httpResult {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet,
				plain.server.URL+"/graphql?query="+url.QueryEscape(`mutation { createChat(input: {title: "x"}) { chat { id } } }`), nil)
			return send(t, req)
		}, status: http.StatusMethodNotAllowed, wantVary: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.do()
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.raw)
			}
			if got := r.header.Get("Cache-Control"); got != "private, no-store" {
				t.Errorf("Cache-Control = %q, want \"private, no-store\"", got)
			}
			vary := varyNames(r)
			if !tc.wantVary {
				// A POST is cached by nobody; without CORS nothing varies.
				if len(vary) != 0 {
					t.Errorf("Vary = %v, want none", vary)
				}
				return
			}
			for _, name := range []string{"x-api-key", "origin", "accept"} {
				if n := count(vary, name); n != 1 {
					t.Errorf("Vary = %v: %s appears %d times, want once", vary, name, n)
				}
			}
		})
	}
}

func count(names []string, name string) int {
	n := 0
	for _, v := range names {
		if v == name {
			n++
		}
	}
	return n
}
