package facade_test

// Robustness against other implementations of the upstream. UPSTREAM.md
// describes what a real Sure answers, but independent servers (other Sure
// versions, proxies, re-implementations) may differ wherever it leaves
// room. Each variant (a file variants_<subject>_test.go; this one holds
// their plumbing) puts an http.Handler between the facade's client and the
// fake upstream that rewrites the fake's answers (or requests) into what
// such a server would send, and checks that the facade still answers
// exactly what the seed holds.
//
// Every wrapper lets each request it receives reach the fake exactly once,
// so that the fake's count (env.do compares it with
// extensions.upstream.calls) stays the number of requests the facade sent.
// Where a variant needs more of the fake's data than that one answer holds
// (the re-paged chat list), it reads it from a second fake with the same
// deterministic seed, which no env counts.

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/restclient"
)

// newVariantEnv is newEnv with wrap(fake) as the upstream: the facade's
// client talks to the wrapper, which talks to the fake. Calls are still
// counted by the fake (e.upstream).
func newVariantEnv(t *testing.T, wrap func(http.Handler) http.Handler) *env {
	t.Helper()
	up := restclienttest.New()
	upSrv := httptest.NewServer(wrap(up))
	t.Cleanup(upSrv.Close)
	client, err := restclient.New(upSrv.URL,
		restclient.WithHTTPClient(&http.Client{Timeout: 5 * time.Second}),
		// Retries stay on (one, as in production) but without waiting.
		restclient.WithRetryPolicy(restclient.RetryPolicy{MaxRetries: 1}),
	)
	if err != nil {
		t.Fatal(err)
	}
	// The cache off, as newEnv has it: these tests count what each answer
	// of the variant costs.
	srv := httptest.NewServer(facade.New(facade.Config{Upstream: client, Log: slog.New(slog.DiscardHandler), CacheTTL: facade.CacheOff}))
	t.Cleanup(srv.Close)
	return &env{t: t, upstream: up, server: srv}
}

// variantEnvFor returns a copy of e that reports to t, so that a subtest's
// failures (Fatal included) stay on the subtest's own goroutine.
func variantEnvFor(t *testing.T, e *env) *env {
	c := *e
	c.t = t
	return &c
}

// --- wrapper plumbing -------------------------------------------------------

// upstreamAnswer is the fake's answer to one request.
type upstreamAnswer struct {
	status int
	header http.Header
	body   []byte
}

// captureUpstream lets h answer r (one counted request) and keeps the answer.
func captureUpstream(h http.Handler, r *http.Request) upstreamAnswer {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return upstreamAnswer{status: rec.Code, header: rec.Header().Clone(), body: rec.Body.Bytes()}
}

// write sends the answer, headers and status kept (Content-Length is
// recomputed: the body may have changed).
func (a upstreamAnswer) write(w http.ResponseWriter) {
	for k, vs := range a.header {
		if k != "Content-Length" {
			w.Header()[k] = vs
		}
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

// rewriteJSON returns a handler that lets next answer and passes every JSON
// answer through edit (decoded with json.Number, so numbers survive), then
// re-encodes it. Other answers pass unchanged.
func rewriteJSON(t *testing.T, next http.Handler, edit func(r *http.Request, status int, body any) any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := captureUpstream(next, r)
		if strings.Contains(a.header.Get("Content-Type"), "json") && len(a.body) > 0 {
			if v, err := decodeAnswerTree(a.body); err != nil {
				t.Errorf("variant: the fake's answer to %s is not JSON: %v", r.URL, err)
			} else if out, err := json.Marshal(edit(r, a.status, v)); err != nil {
				t.Errorf("variant: re-encoding the answer to %s: %v", r.URL, err)
			} else {
				a.body = out
			}
		}
		a.write(w)
	})
}

// freeJSONMembers names the members whose value is free-form user JSON (tool
// calls): kept as the raw bytes the fake sent, so that their key order and
// numbers reach the facade unchanged.
var freeJSONMembers = map[string]bool{"function_arguments": true, "function_result": true}

// decodeAnswerTree decodes a JSON answer into map[string]any / []any /
// json.Number / string / bool / nil, except the values of the
// freeJSONMembers, which stay json.RawMessage (re-encoded verbatim).
func decodeAnswerTree(raw []byte) (any, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) > 0 && raw[0] == '{':
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m))
		for k, v := range m {
			if freeJSONMembers[k] {
				out[k] = v
				continue
			}
			x, err := decodeAnswerTree(v)
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	case len(raw) > 0 && raw[0] == '[':
		var l []json.RawMessage
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, err
		}
		out := make([]any, len(l))
		for i, v := range l {
			x, err := decodeAnswerTree(v)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	err := dec.Decode(&x)
	return x, err
}

// upstreamPath returns the path under /api/v1/ without a trailing slash
// ("categories", "chats/<id>", ...).
func upstreamPath(r *http.Request) string {
	return strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/v1/"), "/")
}

// askedPage reads `page` as the facade sent it (always a plain number);
// missing or below 1 is 1.
func askedPage(r *http.Request) int {
	p, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || p < 1 {
		return 1
	}
	return p
}

func jsonNumberInt(v any) int {
	switch n := v.(type) {
	case json.Number:
		i, _ := n.Int64()
		return int(i)
	case float64:
		return int(n)
	}
	return 0
}

// --- seed readers -----------------------------------------------------------

// seedChat is an element of the fake's chat list, as rendered.
// seedChat is a chat of the fake's list: FirstMessageAt is what Sure
// names last_message_at, the oldest message's time.
type seedChat struct {
	ID             string  `json:"id"`
	Title          string  `json:"title"`
	FirstMessageAt *string `json:"last_message_at"`
	MessageCount   int     `json:"message_count"`
	Error          *string `json:"error"`
}

type seedMessage struct {
	ID        string `json:"id"`
	Role      string `json:"role"`
	Content   string `json:"content"`
	CreatedAt string `json:"created_at"`
}

// seedFakeGET answers target from h (a fake that no env counts) as key.
func seedFakeGET(t *testing.T, h http.Handler, key, target string, out any) {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, target, nil)
	req.Header.Set("X-Api-Key", key)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("seed GET %s: %d %s", target, rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
		t.Fatalf("seed GET %s: %v", target, err)
	}
}

// seedChatList returns key's chats as the fake lists them, newest first.
func seedChatList(t *testing.T, seed *restclienttest.Server, key string) []seedChat {
	t.Helper()
	var all []seedChat
	for page := 1; ; page++ {
		var p struct {
			Chats      []seedChat
			Pagination struct {
				Page       int `json:"page"`
				TotalPages int `json:"total_pages"`
			}
		}
		seedFakeGET(t, seed, key, "/api/v1/chats?page="+strconv.Itoa(page), &p)
		all = append(all, p.Chats...)
		if p.Pagination.Page >= p.Pagination.TotalPages {
			return all
		}
	}
}

// seedMessages returns the messages of a chat, oldest first.
func seedMessages(t *testing.T, seed *restclienttest.Server, key, chatID string) []seedMessage {
	t.Helper()
	var all []seedMessage
	for page := 1; ; page++ {
		var p struct {
			Messages   []seedMessage
			Pagination struct {
				Page       int `json:"page"`
				TotalPages int `json:"total_pages"`
			}
		}
		seedFakeGET(t, seed, key, "/api/v1/chats/"+chatID+"?page="+strconv.Itoa(page), &p)
		all = append(all, p.Messages...)
		if p.Pagination.Page >= p.Pagination.TotalPages {
			return all
		}
	}
}

func seedMessageIDs(ms []seedMessage) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// sameInstantRFC3339 reports whether two RFC 3339 timestamps are the same
// instant.
func sameInstantRFC3339(a, b string) bool {
	ta, errA := time.Parse(time.RFC3339Nano, a)
	tb, errB := time.Parse(time.RFC3339Nano, b)
	return errA == nil && errB == nil && ta.Equal(tb)
}

func nullableString(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}

// wantMessageTime checks a chat's firstMessageAt or lastMessageAt (field)
// against the seed: the right instant, or (when allowNull) null, never a
// wrong value.
func wantMessageTime(t *testing.T, title, field string, got *string, want *string, allowNull bool) (wasNull bool) {
	t.Helper()
	switch {
	case got == nil && want == nil:
	case got == nil && allowNull:
		return true
	case got == nil || want == nil || !sameInstantRFC3339(*got, *want):
		t.Errorf("%s: %s = %s, want %s", title, field, nullableString(got), nullableString(want))
	}
	return false
}

// seedNewestAt returns the time of the chat's newest message in the
// seed, or nil when it has none.
func seedNewestAt(t *testing.T, seed *restclienttest.Server, key, chatID string) *string {
	t.Helper()
	ms := seedMessages(t, seed, key, chatID)
	if len(ms) == 0 {
		return nil
	}
	return &ms[len(ms)-1].CreatedAt
}

// demoLongChat returns the demo chat with more than 100 messages.
func demoLongChat(t *testing.T, e *env) restclienttest.Chat {
	t.Helper()
	for _, c := range e.upstream.Chats(restclienttest.DemoKey) {
		if c.MessageCount > 100 {
			return c
		}
	}
	t.Fatal("the demo seed has no chat with more than 100 messages")
	return restclienttest.Chat{}
}

// Guard: the wrappers above rewrite what they claim and nothing else. With
// an identity edit, every answer is the fake's, byte for byte apart from
// re-encoding.
func TestVariant_IdentityWrapperChangesNothing(t *testing.T) {
	t.Parallel()
	identity := func(next http.Handler) http.Handler {
		return rewriteJSON(t, next, func(_ *http.Request, _ int, body any) any { return body })
	}
	ve := newVariantEnv(t, identity)
	base := newEnv(t)
	for _, q := range []struct{ key, query string }{
		{restclienttest.DemoKey, treeQuery},
		{restclienttest.LargeFamilyKey, `{ chats(last: 5) { totalCount nodes { id title firstMessageAt lastMessageAt error } } }`},
	} {
		want := base.ok(q.key, q.query, nil, nil)
		got := ve.ok(q.key, q.query, nil, nil)
		if string(got.data) != string(want.data) || got.calls != want.calls {
			t.Errorf("identity wrapper changed the answer to %s\n got %s (%d calls)\nwant %s (%d calls)", q.query, got.data, got.calls, want.data, want.calls)
		}
	}
}
