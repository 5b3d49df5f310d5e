package facade_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/limits/querylimit"
)

// The HTTP layer answers what gqlgen would get wrong with the status the
// GraphQL-over-HTTP specification names, and a JSON body with
// extensions.code, before any document is read or upstream call made.
func TestHTTP_MethodsAndMediaTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const query = `{"query":"{ __typename }"}`
	tests := []struct {
		name, method, contentType, body string
		wantStatus                      int
		wantAllow, wantCode             string
	}{
		{name: "PUT", method: http.MethodPut, contentType: "application/json", body: query,
			wantStatus: 405, wantAllow: "GET, POST, OPTIONS", wantCode: "METHOD_NOT_ALLOWED"},
		{name: "DELETE", method: http.MethodDelete,
			wantStatus: 405, wantAllow: "GET, POST, OPTIONS", wantCode: "METHOD_NOT_ALLOWED"},
		{name: "PATCH", method: http.MethodPatch, contentType: "application/json", body: query,
			wantStatus: 405, wantAllow: "GET, POST, OPTIONS", wantCode: "METHOD_NOT_ALLOWED"},
		{name: "text/plain POST", method: http.MethodPost, contentType: "text/plain", body: query,
			wantStatus: 415, wantCode: "UNSUPPORTED_MEDIA_TYPE"},
		{name: "POST without a content type", method: http.MethodPost, body: query,
			wantStatus: 415, wantCode: "UNSUPPORTED_MEDIA_TYPE"},
		{name: "form POST", method: http.MethodPost, contentType: "application/x-www-form-urlencoded", body: "query=%7B__typename%7D",
			wantStatus: 415, wantCode: "UNSUPPORTED_MEDIA_TYPE"},
		{name: "application/graphql POST", method: http.MethodPost, contentType: "application/graphql", body: "{ __typename }",
			wantStatus: 415, wantCode: "UNSUPPORTED_MEDIA_TYPE"},
		{name: "JSON with a charset", method: http.MethodPost, contentType: "application/json; charset=utf-8", body: query,
			wantStatus: 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), tc.method, e.server.URL+"/graphql", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			req.Header.Set("X-Api-Key", restclienttest.DemoKey)
			r := send(t, req)
			if r.status != tc.wantStatus {
				t.Errorf("status = %d, want %d (%s)", r.status, tc.wantStatus, r.raw)
			}
			if got := r.header.Get("Allow"); got != tc.wantAllow {
				t.Errorf("Allow = %q, want %q", got, tc.wantAllow)
			}
			if tc.wantCode == "" {
				return
			}
			if !strings.HasPrefix(r.contentType, "application/json") {
				t.Errorf("content type = %q, want application/json", r.contentType)
			}
			if got := errorCode(r); got != tc.wantCode {
				t.Errorf("extensions.code = %q, want %s (%s)", got, tc.wantCode, r.raw)
			}
		})
	}
	if n := e.upstream.Calls(); n != 0 {
		t.Errorf("upstream calls = %d, want 0", n)
	}
}

// A plain OPTIONS (not a CORS preflight) is answered by gqlgen with the
// methods the endpoint allows.
func TestHTTP_PlainOptions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodOptions, e.server.URL+"/graphql", nil)
	r := send(t, req)
	if r.status != http.StatusOK || r.header.Get("Allow") == "" {
		t.Errorf("OPTIONS: status %d, Allow %q; want 200 with Allow", r.status, r.header.Get("Allow"))
	}
}

// A body over the limit is 413; a body that breaks off is 400.
func TestHTTP_BodyTooLarge(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	big := `{"query":"{ __typename }","variables":{"pad":"` + strings.Repeat("x", 1<<20) + `"}}`
	r := postJSON(t, e, big, nil)
	if r.status != http.StatusRequestEntityTooLarge || errorCode(r) != querylimit.Code {
		t.Errorf("status %d, body %.200s; want 413 %s", r.status, r.raw, querylimit.Code)
	}
}
