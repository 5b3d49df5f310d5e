package facade_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// unknownID is a valid UUID that names nothing in any seeded family.
const unknownID = "6f1c1c1e-0000-4000-8000-00000000dead"

// nodeAnswer is what the node tests select of any Node.
type nodeAnswer struct {
	Typename string `json:"__typename"`
	ID       string `json:"id"`
	Name     string `json:"name"`  // Category
	Title    string `json:"title"` // Chat
	Status   string `json:"status"`
}

const nodeQuery = `query($id: ID!) { node(id: $id) { __typename id
	... on Category { name } ... on Chat { title } ... on Import { status } } }`

const nodesQuery = `query($ids: [ID!]!) { nodes(ids: $ids) { __typename id
	... on Category { name } ... on Chat { title } ... on Import { status } } }`

// demoCategories lists the first n categories as the demo key: the answer
// hands their ids out to that key.
func demoCategories(t *testing.T, e *env, n int) []categoryNode {
	t.Helper()
	var out struct{ Categories categoryConn }
	e.ok(restclienttest.DemoKey, `query($n: Int) { categories(first: $n) { nodes { id name } } }`, map[string]any{"n": n}, &out)
	if len(out.Categories.Nodes) != n {
		t.Fatalf("categories(first: %d) = %d nodes", n, len(out.Categories.Nodes))
	}
	return out.Categories.Nodes
}

func node(t *testing.T, e *env, key, id string) (*nodeAnswer, result) {
	t.Helper()
	var out struct{ Node *nodeAnswer }
	r := e.ok(key, nodeQuery, map[string]any{"id": id}, &out)
	return out.Node, r
}

func TestNode_CategorySeenBeforeCostsOneLookup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.DemoKey
	cats := demoCategories(t, e, 5)
	for _, c := range []categoryNode{cats[0], cats[4]} {
		got, r := node(t, e, key, c.ID)
		wantCalls(t, r, 1)
		if got == nil || got.Typename != "Category" || got.ID != c.ID || got.Name != c.Name {
			t.Errorf("node(%s) = %+v, want Category %q", c.ID, got, c.Name)
		}
	}
}

// The operation's own categories answer a node id at no call, although
// the root fields run concurrently: node waits for the category list.
func TestNode_HeldByTheSameOperationCostsNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.DemoKey
	cats := demoCategories(t, e, 5)
	q := `query($id: ID!) { categories(first: 5) { nodes { id } } node(id: $id) { ... on Category { name } } }`
	for _, c := range cats {
		var out struct{ Node *nodeAnswer }
		r := e.ok(key, q, map[string]any{"id": c.ID}, &out)
		wantCalls(t, r, 1) // the list only
		if out.Node == nil || out.Node.Name != c.Name {
			t.Errorf("node(%s) = %+v, want %q", c.ID, out.Node, c.Name)
		}
	}
	// The same for a key that never saw the id before this operation.
	other := restclienttest.ReadOnlyKey
	var out struct{ Nodes []*nodeAnswer }
	r := e.ok(other, `query($ids: [ID!]!) { categories(first: 5) { nodes { id } } nodes(ids: $ids) { ... on Category { name } } }`,
		map[string]any{"ids": []string{cats[3].ID, cats[1].ID}}, &out)
	wantCalls(t, r, 1)
	if len(out.Nodes) != 2 || out.Nodes[0] == nil || out.Nodes[0].Name != cats[3].Name || out.Nodes[1] == nil || out.Nodes[1].Name != cats[1].Name {
		t.Errorf("nodes = %+v, want %q and %q", out.Nodes, cats[3].Name, cats[1].Name)
	}
}

func TestNode_ChatAndImport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.DemoKey
	chat := e.upstream.Chats(key)[0]
	imp := e.upstream.ImportIDs(key)[0]

	// Never seen: probed as each kind, in parallel (a category, a chat,
	// an import, an account: the account list).
	got, r := node(t, e, key, imp)
	wantCalls(t, r, 4)
	if got == nil || got.Typename != "Import" || got.ID != imp || got.Status == "" {
		t.Fatalf("node(import) = %+v, want the import", got)
	}
	// Seen: its one lookup.
	got, r = node(t, e, key, imp)
	wantCalls(t, r, 1)
	if got == nil || got.Typename != "Import" {
		t.Errorf("node(import) again = %+v, want the import", got)
	}

	var list struct{ Chats chatConn }
	e.ok(key, `{ chats(first: 5) { nodes { id } } }`, nil, &list)
	got, r = node(t, e, key, chat.ID)
	wantCalls(t, r, 1)
	if got == nil || got.Typename != "Chat" || got.Title != chat.Title {
		t.Errorf("node(chat) = %+v, want chat %q", got, chat.Title)
	}
}

func TestNode_UnknownIDIsNull(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	got, r := node(t, e, restclienttest.DemoKey, unknownID)
	if got != nil {
		t.Errorf("node(unknown) = %+v, want null", got)
	}
	wantCalls(t, r, 4) // the family's page, chat and import shows (404), the account list
}

func TestNode_JunkIDIsBadUserInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.DemoKey
	r := e.do(key, nodeQuery, map[string]any{"id": "Q2F0ZWdvcnk6MQ=="})
	wantError(t, r, "BAD_USER_INPUT")
	wantCalls(t, r, 0)

	r = e.do(key, nodesQuery, map[string]any{"ids": make([]string, 101)})
	wantError(t, r, "BAD_USER_INPUT")
	wantCalls(t, r, 0)
}

func TestNodes_MixedKindsInOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.DemoKey
	cat := demoCategories(t, e, 3)[2]
	chat := e.upstream.Chats(key)[1]
	imp := e.upstream.ImportIDs(key)[1]
	e.ok(key, `{ chats(first: 5) { nodes { id } } }`, nil, nil)
	e.ok(key, `query($id: ID!) { import(id: $id) { id } }`, map[string]any{"id": imp}, nil)

	var out struct{ Nodes []*nodeAnswer }
	r := e.do(key, nodesQuery, map[string]any{"ids": []string{chat.ID, "junk", unknownID, imp, cat.ID}})
	if err := json.Unmarshal(r.data, &out); err != nil {
		t.Fatalf("decode %s: %v", r.data, err)
	}
	// Planned together: the category and the unknown id as a category,
	// the family's first page (which holds the whole family); the chat
	// seen before and the unknown id as a chat, the chat list's one page
	// (a show each would be two); the import and the unknown id as an
	// import, the import list's one page; the unknown id as an account,
	// the account list's one page.
	wantCalls(t, r, 4)
	var types []string
	for _, n := range out.Nodes {
		if n == nil {
			types = append(types, "null")
		} else {
			types = append(types, n.Typename)
		}
	}
	if want := []string{"Chat", "null", "null", "Import", "Category"}; !slices.Equal(types, want) {
		t.Fatalf("nodes = %v, want %v", types, want)
	}
	if out.Nodes[0].Title != chat.Title || out.Nodes[4].Name != cat.Name || out.Nodes[3].ID != imp {
		t.Errorf("nodes = %+v %+v %+v, want %q, %s, %q", out.Nodes[0], out.Nodes[3], out.Nodes[4], chat.Title, imp, cat.Name)
	}
	bad := wantError(t, r, "BAD_USER_INPUT")
	if !slices.Equal(bad.Path, []any{"nodes", float64(1)}) {
		t.Errorf("junk id error at %v, want [nodes 1]", bad.Path)
	}
	if len(r.errs) != 1 {
		t.Errorf("errors = %v, want only the junk id's (an unknown id is null without an error)", r.errs)
	}
}

// Categories seen before share the family's first page.
func TestNodes_CategoriesShareOnePage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.DemoKey
	cats := demoCategories(t, e, 4)
	var out struct{ Nodes []*nodeAnswer }
	r := e.ok(key, nodesQuery, map[string]any{"ids": []string{cats[3].ID, cats[0].ID, cats[2].ID}}, &out)
	wantCalls(t, r, 1)
	for i, want := range []string{cats[3].Name, cats[0].Name, cats[2].Name} {
		if out.Nodes[i] == nil || out.Nodes[i].Name != want {
			t.Errorf("nodes[%d] = %+v, want %q", i, out.Nodes[i], want)
		}
	}
}

// What one key was handed never tells another key's node what an id is:
// another key probes every kind, and a key of another family finds
// nothing.
func TestNode_KindsAreRememberedPerKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cat := demoCategories(t, e, 2)[1]

	// Same family, another key: found by the family's first page, the
	// first lookup of an id of a kind not known (no chat or import
	// lookup once it is found).
	got, r := node(t, e, restclienttest.ReadOnlyKey, cat.ID)
	wantCalls(t, r, 1)
	if got == nil || got.Name != cat.Name {
		t.Errorf("node as another key of the family = %+v, want %q", got, cat.Name)
	}
	got, r = node(t, e, restclienttest.ReadOnlyKey, cat.ID)
	wantCalls(t, r, 1) // now this key has seen it: the page again (no cache)
	if got == nil || got.Name != cat.Name {
		t.Errorf("node again = %+v, want %q", got, cat.Name)
	}

	// Another family: the id is not theirs (its family's page, then a
	// chat and an import show and the account list).
	got, r = node(t, e, restclienttest.OtherFamilyKey, cat.ID)
	wantCalls(t, r, 4)
	if got != nil {
		t.Errorf("node as another family = %+v, want null", got)
	}
}

// An upstream failure is that failure, not "not found".
func TestNode_UpstreamFailureIsNotNull(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.DemoKey
	e.upstream.FailNext("/api/v1/imports", 2, http.StatusBadGateway, "text/html", "<html>bad gateway</html>")
	r := e.do(key, nodeQuery, map[string]any{"id": unknownID})
	wantError(t, r, "UPSTREAM_UNAVAILABLE")

	e.upstream.RevokeKey(key)
	r = e.do(key, nodeQuery, map[string]any{"id": unknownID})
	wantError(t, r, "UNAUTHENTICATED")
}

// An unknown id needs three lookups: when the budget cannot afford them
// all, none is sent.
func TestNode_UnknownIDWithinTheBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.MaxUpstreamCalls = 2 }))
	r := e.do(restclienttest.DemoKey, nodeQuery, map[string]any{"id": unknownID})
	wantError(t, r, "QUERY_TOO_EXPENSIVE")
	wantCalls(t, r, 0)
}

// Aliased node fields of unknown ids each need three lookups. Side by side
// on one budget, each is answered whole (null: found nowhere) or refused
// whole (QUERY_TOO_EXPENSIVE, at no call): no field spends calls and then
// fails, and the refused ones leave the budget to the others.
func TestNode_AliasedUnknownIDsAnsweredWholeOrRefusedWhole(t *testing.T) {
	t.Parallel()
	const budget, fields = 10, 8
	e := newEnv(t, withConfig(func(c *facade.Config) { c.MaxUpstreamCalls = budget }))
	query := "{"
	for i := range fields {
		query += fmt.Sprintf(` n%d: node(id: "6f1c1c1e-0000-4000-8000-0000000000%02d") { id }`, i, i)
	}
	query += " }"
	r := e.do(restclienttest.DemoKey, query, nil)
	var data map[string]*nodeAnswer
	if err := json.Unmarshal(r.data, &data); err != nil {
		t.Fatalf("decode %s: %v", r.data, err)
	}
	refused := map[string]bool{}
	for _, err := range r.errs {
		if err.Extensions["code"] != "QUERY_TOO_EXPENSIVE" || len(err.Path) != 1 {
			t.Fatalf("error %v (path %v), want only QUERY_TOO_EXPENSIVE on node fields", err, err.Path)
		}
		refused[fmt.Sprint(err.Path[0])] = true
	}
	for alias, n := range data {
		if n != nil {
			t.Errorf("%s = %+v, want null", alias, n)
		}
	}
	// Each answered field reserved its three lookups; their category
	// lookups may share one page of the family, so they spend at most that.
	answered := fields - len(refused)
	if answered < budget/3 {
		t.Errorf("%d fields answered, %d refused; want at least %d (three lookups each within %d calls)", answered, len(refused), budget/3, budget)
	}
	if r.calls > 3*answered || r.calls > budget {
		t.Errorf("upstream calls = %d for %d answered fields: refused fields spent calls, or the budget of %d was passed", r.calls, answered, budget)
	}
}
