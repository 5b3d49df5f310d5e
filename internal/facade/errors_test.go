package facade_test

import (
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/suregql/suregql/internal/fake/restclienttest"
)

func TestErrors_Codes(t *testing.T) {
	t.Parallel()
	importQuery := `query($id: ID!) { import(id: $id) { id } }`
	tests := []struct {
		name      string
		key       string
		setup     func(*env)
		query     string
		vars      map[string]any
		code      string
		upstream  string // extensions.upstreamError
		wantCalls int
	}{
		{name: "no key", key: "", query: `{ chats(first: 1) { totalCount } }`, code: "UNAUTHENTICATED", wantCalls: 0},
		{name: "key with a space", key: "demo key", query: `{ chats(first: 1) { totalCount } }`, code: "UNAUTHENTICATED", wantCalls: 0},
		{name: "unknown key", key: "no-such-key", query: `{ categories(first: 1) { totalCount } }`, code: "UNAUTHENTICATED", wantCalls: 1},
		{name: "read-only key writes", key: restclienttest.ReadOnlyKey,
			query: `mutation { createChat(input: {title: "x"}) { chat { id } } }`, code: "FORBIDDEN", upstream: "insufficient_scope", wantCalls: 1},
		{name: "AI features off", key: restclienttest.NoAIKey,
			query: `{ chats(first: 1) { totalCount } }`, code: "FORBIDDEN", upstream: "feature_disabled", wantCalls: 1},
		{name: "unknown import", key: restclienttest.DemoKey, query: importQuery,
			vars: map[string]any{"id": "0b7a4a4e-8a2b-4f8e-9d4c-2d7e9b1f3c55"}, code: "NOT_FOUND", wantCalls: 1},
		{name: "import id not a UUID", key: restclienttest.DemoKey, query: importQuery,
			vars: map[string]any{"id": "42"}, code: "BAD_USER_INPUT", wantCalls: 0},
		{name: "rate limited", key: restclienttest.DemoKey,
			setup: func(e *env) { e.upstream.SetRateLimit(restclienttest.DemoKey, 0) },
			query: `{ categories(first: 1) { totalCount } }`, code: "RATE_LIMITED", wantCalls: 1},
		{name: "upstream 500", key: restclienttest.DemoKey,
			setup: func(e *env) {
				e.upstream.FailNext("/api/v1/categories", 1, 500, "application/json", `{"error":"internal_server_error","message":"An unexpected error occurred"}`)
			},
			query: `{ categories(first: 1) { totalCount } }`, code: "UPSTREAM_UNAVAILABLE", wantCalls: 1},
		{name: "proxy HTML 502, retried once", key: restclienttest.DemoKey,
			setup: func(e *env) {
				e.upstream.FailNext("/api/v1/categories", 2, 502, "text/html", "<html><body>Bad Gateway</body></html>")
			},
			query: `{ categories(first: 1) { totalCount } }`, code: "UPSTREAM_UNAVAILABLE", wantCalls: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.setup != nil {
				tc.setup(e)
			}
			r := e.do(tc.key, tc.query, tc.vars)
			err := wantError(t, r, tc.code)
			wantCalls(t, r, tc.wantCalls)
			if tc.upstream != "" && err.Extensions["upstreamError"] != tc.upstream {
				t.Errorf("upstreamError = %v, want %s", err.Extensions["upstreamError"], tc.upstream)
			}
			if tc.code == "RATE_LIMITED" {
				if s, ok := err.Extensions["retryAfter"].(float64); !ok || s <= 0 {
					t.Errorf("retryAfter = %v, want positive seconds", err.Extensions["retryAfter"])
				}
			}
		})
	}
}

// An upstream slower than the request timeout is UPSTREAM_UNAVAILABLE
// (reason "timeout"), every attempt counted. In a bubble: the 50 ms
// timeout fires before the 1 s answer on the bubble's clock, however busy
// the machine.
func TestErrors_UnavailableUpstreamTimesOut(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fake := restclienttest.New()
		fake.SetDelay(time.Second)
		h := inBubbleWith(t, fake, 0, 50*time.Millisecond)
		rec := postIn(h, `{"query":"{ categories(first: 1) { totalCount } }"}`)
		var answer struct {
			Errors     []struct{ Extensions map[string]any }
			Extensions struct{ Upstream struct{ Calls int } }
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
			t.Fatalf("answer %s: %v", rec.Body, err)
		}
		if len(answer.Errors) != 1 || answer.Errors[0].Extensions["code"] != "UPSTREAM_UNAVAILABLE" || answer.Errors[0].Extensions["reason"] != "timeout" {
			t.Fatalf("answer %s, want one UPSTREAM_UNAVAILABLE (reason timeout)", rec.Body)
		}
		if got := answer.Extensions.Upstream.Calls; got != fake.Calls() || got < 1 {
			t.Errorf("extensions.upstream.calls = %d, the upstream counted %d", got, fake.Calls())
		}
	})
}

// One failing field does not fail its siblings.
func TestErrors_PartialResults(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(restclienttest.NoAIKey, `{ chats(first: 1) { totalCount } categories(first: 2) { nodes { name } } }`, nil)
	wantError(t, r, "FORBIDDEN")
	var out struct {
		Chats      *chatConn
		Categories *categoryConn
	}
	if err := jsonUnmarshal(r.data, &out); err != nil {
		t.Fatal(err)
	}
	if out.Chats != nil || out.Categories == nil || len(out.Categories.Nodes) != 2 {
		t.Errorf("data = %s, want chats null and two categories", r.data)
	}
}

func TestImport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	q := `query($id: ID!) { import(id: $id) { id type status accountId error createdAt updatedAt
		configuration { dateColLabel amountColLabel nameColLabel categoryColLabel tagsColLabel notesColLabel accountColLabel dateFormat numberFormat signageConvention }
		stats { rowsCount validRowsCount } } }`
	var failed, clean int
	for _, id := range e.upstream.ImportIDs(restclienttest.DemoKey) {
		var out struct {
			Import struct {
				ID, Type, Status, CreatedAt string
				Error                       *string
				Stats                       struct{ RowsCount int }
			}
		}
		r := e.ok(restclienttest.DemoKey, q, map[string]any{"id": id}, &out)
		wantCalls(t, r, 1)
		if out.Import.ID != id || out.Import.Type == "" || out.Import.Status == "" {
			t.Errorf("import = %+v", out.Import)
		}
		if _, err := time.Parse(time.RFC3339Nano, out.Import.CreatedAt); err != nil {
			t.Errorf("createdAt %q: %v", out.Import.CreatedAt, err)
		}
		if out.Import.Error != nil {
			failed++
		} else {
			clean++
		}
	}
	if failed == 0 || clean == 0 {
		t.Errorf("got %d imports with an error and %d without; the seed has both", failed, clean)
	}
}

// A caller's Authorization header never reaches the upstream (it would make
// Sure try OAuth and answer 401 for a valid key).
func TestAuthorizationHeaderIsNotForwarded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client(restclienttest.DemoKey)
	_ = c
	req := `{"query":"{ categories(first: 1) { totalCount } }"}`
	resp := postJSON(t, e, req, map[string]string{"X-Api-Key": restclienttest.DemoKey, "Authorization": "Bearer someone-elses-token"})
	if resp.status != 200 || resp.body["errors"] != nil {
		t.Fatalf("status %d, body %v", resp.status, resp.body)
	}
}
