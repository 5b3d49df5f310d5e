package facade_test

// Answers that are not Sure's are not data (issue 17, item 5): an
// upstream answering 200 with JSON of another shape ({"hello":"world"})
// or with a value Sure never sends (total_count -7) gets
// UPSTREAM_UNAVAILABLE with reason not_sure, never an empty list of
// totalCount 0, and such an answer is not cached.

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// notSureUpstream rewrites the fake's 2xx answers to GETs while mode is
// set: "hello" answers {"hello":"world"}; "negative" makes every count of
// the answer -7 (total_count of a pagination or meta block, a category's
// subcategories_count, an import's stats.rows_count). Each request still
// reaches the fake once.
type notSureUpstream struct {
	t         *testing.T
	mode      atomic.Value // string
	rewritten atomic.Int64
}

func (u *notSureUpstream) wrap(next http.Handler) http.Handler {
	return rewriteJSON(u.t, next, func(r *http.Request, status int, body any) any {
		mode, _ := u.mode.Load().(string)
		obj, ok := body.(map[string]any)
		if mode == "" || r.Method != http.MethodGet || status >= 300 || !ok {
			return body
		}
		u.rewritten.Add(1)
		if mode == "hello" {
			return map[string]any{"hello": "world"}
		}
		for _, block := range []string{"pagination", "meta"} {
			if b, ok := obj[block].(map[string]any); ok {
				b["total_count"] = -7
			}
		}
		if _, ok := obj["subcategories_count"]; ok {
			obj["subcategories_count"] = -7
		}
		for _, c := range jsonObjects(obj["categories"]) {
			c["subcategories_count"] = -7
		}
		if data, ok := obj["data"].(map[string]any); ok {
			if stats, ok := data["stats"].(map[string]any); ok {
				stats["rows_count"] = -7
			}
		}
		return obj
	})
}

func TestNotSureAnswersAreNotData(t *testing.T) {
	t.Parallel()
	u := &notSureUpstream{t: t}
	e := newEnv(t, withUpstreamWrapper(u.wrap), withConfig(func(c *facade.Config) { c.CacheTTL = time.Hour }))
	key := restclienttest.DemoKey
	cats, chats, imports := e.upstream.Categories(key), e.upstream.Chats(key), e.upstream.ImportIDs(key)
	if len(cats) == 0 || len(chats) == 0 || len(imports) == 0 {
		t.Fatalf("the demo family has %d categories, %d chats, %d imports; want some of each", len(cats), len(chats), len(imports))
	}
	for _, tc := range []struct {
		name, field, query string
		vars               map[string]any
	}{
		{"categories", "categories", `{ categories(first: 10) { totalCount nodes { id name } } }`, nil},
		{"chats", "chats", `{ chats(first: 10) { totalCount nodes { id title messageCount } } }`, nil},
		{"imports", "imports", `{ imports(first: 10) { totalCount nodes { id status } } }`, nil},
		{"a category", "category", `query($id: ID!) { category(id: $id) { id name subcategoriesCount } }`, map[string]any{"id": cats[0].ID}},
		{"a chat", "chat", `query($id: ID!) { chat(id: $id) { id title messages(first: 5) { totalCount nodes { id } } } }`, map[string]any{"id": chats[0].ID}},
		{"an import", "import", `query($id: ID!) { import(id: $id) { id status stats { rowsCount } } }`, map[string]any{"id": imports[0]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := variantEnvFor(t, e)
			for _, mode := range []string{"hello", "negative"} {
				u.mode.Store(mode)
				before := u.rewritten.Load()
				r := e.do(key, tc.query, tc.vars)
				if u.rewritten.Load() == before {
					t.Fatalf("%s: no answer was rewritten", mode)
				}
				if len(r.errs) == 0 {
					t.Fatalf("%s: no error, data %s: an answer that is not Sure's was shown as data", mode, r.data)
				}
				for _, err := range r.errs {
					if err.Extensions["code"] != "UPSTREAM_UNAVAILABLE" || err.Extensions["reason"] != "not_sure" || err.Extensions["status"] != float64(http.StatusOK) {
						t.Errorf("%s: error %q %v, want UPSTREAM_UNAVAILABLE with reason not_sure and status 200", mode, err.Message, err.Extensions)
					}
				}
				if want := `{"` + tc.field + `":null}`; string(r.data) != want {
					t.Errorf("%s: data %s, want %s", mode, r.data, want)
				}
				if strings.Contains(string(r.data), "totalCount") {
					t.Errorf("%s: data %s shows a count", mode, r.data)
				}
				// Not worth another call: the answer would be the same.
				wantCalls(t, r, 1)
			}

			// Neither answer was kept: the upstream's true answer comes
			// next, from the upstream.
			u.mode.Store("")
			r := e.ok(key, tc.query, tc.vars, nil)
			if r.calls == 0 {
				t.Errorf("answered from the cache (%s): an answer that is not Sure's was kept", r.data)
			}
			if strings.Contains(string(r.data), ":-7") {
				t.Errorf("data %s holds a count of -7", r.data)
			}
		})
	}
}
