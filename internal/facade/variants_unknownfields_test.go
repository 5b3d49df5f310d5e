package facade_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/planning/paging"
)

// --- variant 2: unknown fields everywhere -----------------------------------

// futureFields adds "x_future": {"a": 1} to every JSON object of every
// answer, nested ones included, except inside the free-form JSON of tool
// calls (user data the facade passes through unchanged).
type futureFields struct {
	t     *testing.T
	added atomic.Int64
}

func (v *futureFields) wrap(next http.Handler) http.Handler {
	return rewriteJSON(v.t, next, func(_ *http.Request, _ int, body any) any {
		v.add(body)
		return body
	})
}

func (v *futureFields) add(x any) {
	switch x := x.(type) {
	case map[string]any:
		for _, val := range x {
			v.add(val) // freeJSONMembers are json.RawMessage: left alone
		}
		x["x_future"] = map[string]any{"a": 1, "nested": []any{map[string]any{"b": "c"}}}
		v.added.Add(1)
	case []any:
		for _, val := range x {
			v.add(val)
		}
	}
}

func TestVariant_UnknownFieldsEverywhere(t *testing.T) {
	t.Parallel()
	v := &futureFields{t: t}
	ve := newVariantEnv(t, v.wrap)
	base := newEnv(t) // the same seed, answered as UPSTREAM.md says

	restaurants, _ := base.upstream.CategoryByName(restclienttest.DemoKey, "Restaurants")
	other := base.upstream.Categories(restclienttest.OtherFamilyKey)[0]
	const fullCategory = `id name classification color icon subcategoriesCount createdAt updatedAt`
	const fullChat = `id title error createdAt updatedAt messageCount lastMessageAt`
	const fullMessages = `messages(first: 100) { totalCount nodes { id type role content model createdAt updatedAt
		toolCalls { id functionName functionArguments functionResult createdAt } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }`
	type op struct {
		name, key, query string
		vars             map[string]any
	}
	ops := []op{
		{"category tree", restclienttest.DemoKey, `{ categories(rootsOnly: true, first: 100) { totalCount nodes { ` + fullCategory +
			` subcategories(first: 50) { totalCount nodes { ` + fullCategory + ` parent { id name } } } } pageInfo { hasNextPage endCursor } } }`, nil},
		{"category with parent", restclienttest.DemoKey, `query($id: ID!) { category(id: $id) { ` + fullCategory + ` parent { ` + fullCategory + ` } } }`,
			map[string]any{"id": restaurants.ID}},
		{"large family tail", restclienttest.LargeFamilyKey, categoriesPage, map[string]any{"last": 7}},
		{"large family window", restclienttest.LargeFamilyKey, categoriesPage, map[string]any{"first": 30,
			"after": paging.EncodeCursor("categories?classification=&roots_only=false&parent_id=", 44)}},
		{"chats", restclienttest.DemoKey, `{ chats(first: 10) { totalCount nodes { ` + fullChat + ` } pageInfo { hasNextPage endCursor } } }`, nil},
		{"large chat list", restclienttest.LargeFamilyKey, `{ chats(last: 25) { totalCount nodes { ` + fullChat + ` } } }`, nil},
		{"category not found", restclienttest.DemoKey, `query($id: ID!) { category(id: $id) { name } }`, map[string]any{"id": other.ID}},
		{"AI features off", restclienttest.NoAIKey, `{ chats(first: 1) { totalCount } }`, nil},
		{"read-only key writes", restclienttest.ReadOnlyKey, `mutation { createChat(input: {title: "x"}) { chat { id } } }`, nil},
		{"rate limit", restclienttest.ReadOnlyKey, `{ rateLimit { limit remaining used } }`, nil},
		{"create chat", restclienttest.DemoKey, `mutation { createChat(input: {title: "Budget review", message: "How did I do?"}) {
			userErrors { field message code } chat { id title error messageCount messages { totalCount nodes { id role content model } } } } }`, nil},
		{"upstream 422", restclienttest.DemoKey, `mutation { createChat(input: {title: "x"}) { userErrors { field message code } chat { id } } }`, nil},
		{"rate limited", restclienttest.OtherFamilyKey, `{ categories(first: 1) { totalCount } }`, nil},
	}
	// Run on both envs before the op of that name.
	setups := map[string]func(*env){
		"upstream 422": func(e *env) {
			e.upstream.FailNext("/api/v1/chats", 1, 422, "application/json", `{"error":"Failed to create chat","details":["Title is too long"]}`)
		},
		"rate limited": func(e *env) { e.upstream.SetRateLimit(restclienttest.OtherFamilyKey, 0) },
	}
	for _, c := range base.upstream.Chats(restclienttest.DemoKey) {
		ops = append(ops, op{"chat " + c.Title, restclienttest.DemoKey, `query($id: ID!) { chat(id: $id) { ` + fullChat + ` ` + fullMessages + ` } }`,
			map[string]any{"id": c.ID}})
	}
	for _, id := range base.upstream.ImportIDs(restclienttest.DemoKey) {
		ops = append(ops, op{"import " + id, restclienttest.DemoKey, `query($id: ID!) { import(id: $id) { id type status accountId error
			configuration { dateColLabel amountColLabel nameColLabel categoryColLabel tagsColLabel notesColLabel accountColLabel dateFormat numberFormat signageConvention }
			stats { rowsCount validRowsCount } createdAt updatedAt } }`, map[string]any{"id": id}})
	}

	errorsOf := func(r result) []string {
		var out []string
		for _, e := range r.errs {
			out = append(out, fmt.Sprint(e.Extensions["code"], e.Path, e.Extensions["upstreamError"]))
		}
		return out
	}
	for _, o := range ops {
		t.Run(o.name, func(t *testing.T) {
			b, ve := variantEnvFor(t, base), variantEnvFor(t, ve)
			if setup := setups[o.name]; setup != nil {
				setup(b)
				setup(ve)
			}
			before := v.added.Load()
			want := b.do(o.key, o.query, o.vars)
			got := ve.do(o.key, o.query, o.vars)
			if v.added.Load() == before && got.calls > 0 {
				t.Error("no unknown field was added: the variant was not exercised")
			}
			if string(got.data) != string(want.data) {
				t.Errorf("data differs with unknown fields\n got %s\nwant %s", got.data, want.data)
			}
			if g, w := errorsOf(got), errorsOf(want); !slices.Equal(g, w) {
				t.Errorf("errors = %v, want %v", g, w)
			}
			if got.calls != want.calls {
				t.Errorf("calls = %d, want %d as without unknown fields", got.calls, want.calls)
			}
		})
	}

	// Beyond "the same as without unknown fields": the data is the seed's.
	t.Run("against the seed", func(t *testing.T) {
		ve := variantEnvFor(t, ve)
		var out struct{ Categories categoryConn }
		ve.ok(restclienttest.DemoKey, `{ categories(first: 100) { totalCount nodes { id name classification color subcategoriesCount parent { id name } } } }`, nil, &out)
		seedCats := ve.upstream.Categories(restclienttest.DemoKey)
		if got, want := names(out.Categories.Nodes), seedNames(seedCats); !slices.Equal(got, want) {
			t.Fatalf("names = %v, want %v", got, want)
		}
		for i, n := range out.Categories.Nodes {
			s := seedCats[i]
			if ve.upstream.Version() == restclienttest.Today {
				s.Classification = "" // today's Sure sends none
			}
			if n.ID != s.ID || n.Color != s.Color || !strings.EqualFold(n.Classification, s.Classification) ||
				(s.ParentID == "") != (n.Parent == nil) || (n.Parent != nil && n.Parent.ID != s.ParentID) {
				t.Errorf("%s = %+v, want %+v", n.Name, n, s)
			}
		}
		var chats struct{ Chats chatConn }
		ve.ok(restclienttest.LargeFamilyKey, chatsPage, map[string]any{"first": 100}, &chats)
		if got, want := chatTitles(chats.Chats.Nodes), seedChatTitles(ve.upstream.Chats(restclienttest.LargeFamilyKey))[:100]; !slices.Equal(got, want) {
			t.Errorf("chat titles = %v, want %v", got, want)
		}
	})
}
