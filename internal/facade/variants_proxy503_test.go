package facade_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// --- variant 6: a proxy 503 before every chats GET ---------------------------

// flaky503 answers the first attempt of every GET under /api/v1/chats with
// a proxy's 503 HTML page, and the retry normally; the next GET of the same
// URL fails once again. The failed attempt still reaches the fake (which
// counts it, as the facade does); its answer is dropped.
type flaky503 struct {
	mu      sync.Mutex
	pending map[string]bool // key + URL whose first attempt failed
	failed  atomic.Int64
}

func (v *flaky503) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := upstreamPath(r)
		if r.Method == http.MethodGet && (p == "chats" || strings.HasPrefix(p, "chats/")) {
			id := r.Header.Get("X-Api-Key") + " " + r.URL.RequestURI()
			v.mu.Lock()
			retry := v.pending[id]
			v.pending[id] = !retry
			v.mu.Unlock()
			if !retry {
				captureUpstream(next, r) // counted by the fake; the proxy drops the answer
				v.failed.Add(1)
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte("<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>"))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func TestVariant_Proxy503BeforeEveryChatsGET(t *testing.T) {
	t.Parallel()
	v := &flaky503{pending: map[string]bool{}}
	e := newVariantEnv(t, v.wrap)
	seed := restclienttest.New()
	key := restclienttest.DemoKey
	long := demoLongChat(t, e)
	msgs := seedMessages(t, seed, key, long.ID)

	tests := []struct {
		name, key, query string
		vars             map[string]any
		wantCalls        int
		check            func(t *testing.T, data json.RawMessage)
	}{
		{"chat list", key, chatsPage, map[string]any{"first": 5}, 2, func(t *testing.T, data json.RawMessage) {
			var out struct{ Chats chatConn }
			_ = json.Unmarshal(data, &out)
			if got, want := chatTitles(out.Chats.Nodes), seedChatTitles(e.upstream.Chats(key)); !slices.Equal(got, want) {
				t.Errorf("titles = %v, want %v", got, want)
			}
		}},
		{"two pages of the large list", restclienttest.LargeFamilyKey, chatsPage, map[string]any{"first": 30}, 4, func(t *testing.T, data json.RawMessage) {
			var out struct{ Chats chatConn }
			_ = json.Unmarshal(data, &out)
			if got, want := chatTitles(out.Chats.Nodes), seedChatTitles(e.upstream.Chats(restclienttest.LargeFamilyKey))[:30]; !slices.Equal(got, want) {
				t.Errorf("titles = %v, want %v", got, want)
			}
		}},
		{"chat show with the newest messages", key, `query($id: ID!) { chat(id: $id) { title lastMessageAt messages(last: 3) { nodes { id } } } }`,
			map[string]any{"id": long.ID}, 2, func(t *testing.T, data json.RawMessage) {
				var out struct{ Chat chatNode }
				_ = json.Unmarshal(data, &out)
				var got []string
				for _, n := range out.Chat.Messages.Nodes {
					got = append(got, n.ID)
				}
				if want := seedMessageIDs(msgs[len(msgs)-3:]); !slices.Equal(got, want) || out.Chat.Title != long.Title {
					t.Errorf("chat %q, messages %v; want %q, %v", out.Chat.Title, got, long.Title, want)
				}
				wantMessageTime(t, long.Title, "lastMessageAt", out.Chat.LastMessageAt, &msgs[len(msgs)-1].CreatedAt, false)
			}},
		{"chat show, all pages of messages", key, `query($id: ID!) { chat(id: $id) { messages(first: 100, after: null) { nodes { id } } m2: messages(last: 20) { nodes { id } } } }`,
			// Six pages of 20 (today's Sure): the show's first page, four
			// more and the overflow page; each answered 503 once.
			map[string]any{"id": long.ID}, 12, func(t *testing.T, data json.RawMessage) {
				var out struct {
					Chat struct {
						Messages, M2 struct{ Nodes []struct{ ID string } }
					}
				}
				_ = json.Unmarshal(data, &out)
				var got []string
				for _, n := range append(out.Chat.Messages.Nodes, out.Chat.M2.Nodes...) {
					got = append(got, n.ID)
				}
				if want := append(seedMessageIDs(msgs[:100]), seedMessageIDs(msgs[100:])...); !slices.Equal(got, want) {
					t.Errorf("messages = %d ids, want %d", len(got), len(want))
				}
			}},
		{"list and show together, categories untouched", key, `query($id: ID!) { chats(first: 2) { nodes { title } } chat(id: $id) { title } categories(first: 3) { nodes { name } } }`,
			map[string]any{"id": long.ID}, 5, func(t *testing.T, data json.RawMessage) {
				var out struct {
					Chats      chatConn
					Chat       chatNode
					Categories categoryConn
				}
				_ = json.Unmarshal(data, &out)
				if got, want := chatTitles(out.Chats.Nodes), seedChatTitles(e.upstream.Chats(key))[:2]; !slices.Equal(got, want) || out.Chat.Title != long.Title {
					t.Errorf("chats %v, chat %q; want %v, %q", got, out.Chat.Title, want, long.Title)
				}
				if got, want := names(out.Categories.Nodes), seedNames(e.upstream.Categories(key))[:3]; !slices.Equal(got, want) {
					t.Errorf("categories = %v, want %v", got, want)
				}
			}},
		{"the same list again fails once again", key, chatsPage, map[string]any{"first": 5}, 2, nil},
		{"a write is not retried and not failed", key, `mutation { createChat(input: {title: "After the proxy"}) { chat { title } userErrors { code } } }`, nil, 1,
			func(t *testing.T, data json.RawMessage) {
				if !strings.Contains(string(data), `"title":"After the proxy"`) {
					t.Errorf("createChat = %s", data)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := variantEnvFor(t, e)
			before := v.failed.Load()
			logBefore := len(e.upstream.Requests())
			r := e.ok(tc.key, tc.query, tc.vars, nil)
			wantCalls(t, r, tc.wantCalls)
			failed := int(v.failed.Load() - before)
			t.Logf("%d calls, %d of them answered 503", r.calls, failed)
			// Every failed attempt was followed by the same request.
			seen := map[string]int{}
			for _, req := range e.upstream.Requests()[logBefore:] {
				if req.Method == http.MethodGet && strings.HasPrefix(req.Path, "/api/v1/chats") {
					seen[req.Path+"?"+req.RawQuery]++
				}
			}
			for u, n := range seen {
				if n != 2 {
					t.Errorf("%s was sent %d times, want 2 (the 503, then the retry)", u, n)
				}
			}
			if len(seen) != failed {
				t.Errorf("%d distinct chat GETs, %d failed attempts; want one failure each", len(seen), failed)
			}
			if tc.check != nil {
				tc.check(t, r.data)
			}
		})
	}
}
