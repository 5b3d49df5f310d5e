package facade_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// Category writes (createCategory): on a server that has them, with and
// without the answer cache, and on one too old to.

type categoryPayload struct {
	CreateCategory *struct {
		Category         *categoryNode `json:"category"`
		UserErrors       []userError   `json:"userErrors"`
		ClientMutationID *string       `json:"clientMutationId"`
		ConfirmedByRead  bool          `json:"confirmedByRead"`
	} `json:"createCategory"`
}

const createCategory = `mutation($in: CreateCategoryInput!) { createCategory(input: $in) {
  clientMutationId confirmedByRead userErrors { field message code }
  category { id name classification color subcategoriesCount parent { id name } } } }`

const categoryTree = `query($id: ID!) {
  categories(first: 100) { totalCount nodes { id name } }
  category(id: $id) { subcategoriesCount subcategories(first: 100) { totalCount nodes { name } } } }`

type categoryTreeAnswer struct {
	Categories categoryConn
	Category   categoryNode
}

// createCategory (Sure v0.7.1): one call, the category as the server made
// it, with no classification invented; the next read sees it, in the list
// and among its parent's subcategories, also with the answer cache on and
// within one batch whose earlier operation read the family. What the server
// refuses (a taken name, a third level) is a user error; a blank name costs
// no call; a read-only key is FORBIDDEN.
func TestCreateCategory(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts []envOption
	}{{"no cache", nil}, {"cache", []envOption{withAnswerCache}}} {
		t.Run(tc.name, func(t *testing.T) { testCreateCategory(t, newEnv(t, tc.opts...)) })
	}
}

func testCreateCategory(t *testing.T, e *env) {
	key := restclienttest.DemoKey
	food, ok := e.upstream.CategoryByName(key, "Food & Drink")
	if !ok {
		t.Fatal("the demo seed has no Food & Drink")
	}
	var sub restclienttest.Category
	for _, c := range e.upstream.Categories(key) {
		if c.ParentID == food.ID {
			sub = c
		}
	}
	familySize := len(e.upstream.Categories(key))

	// Read first: the family and the parent's subcategories.
	var before categoryTreeAnswer
	e.ok(key, categoryTree, map[string]any{"id": food.ID}, &before)
	if before.Categories.TotalCount != familySize {
		t.Fatalf("totalCount = %d, want %d", before.Categories.TotalCount, familySize)
	}
	kids := before.Category.SubcategoriesCount

	// A root category.
	var out categoryPayload
	r := e.ok(key, createCategory, map[string]any{"in": map[string]any{"name": "Pet care", "color": "#0ea5e9", "clientMutationId": "c1"}}, &out)
	wantCalls(t, r, 1)
	p := out.CreateCategory
	if p == nil || p.Category == nil || len(p.UserErrors) != 0 || p.ClientMutationID == nil || *p.ClientMutationID != "c1" || p.ConfirmedByRead {
		t.Fatalf("createCategory = %s", r.data)
	}
	if c := p.Category; c.Name != "Pet care" || c.Color != "#0ea5e9" || c.Parent != nil || c.SubcategoriesCount != 0 || c.Classification != "" || !strings.Contains(string(r.data), `"classification":null`) {
		t.Errorf("category = %s, want Pet care, #0ea5e9, a root, classification null", r.data)
	}
	// A subcategory.
	r = e.ok(key, createCategory, map[string]any{"in": map[string]any{"name": "Street food", "parentId": food.ID}}, &out)
	wantCalls(t, r, 1)
	if c := out.CreateCategory.Category; c == nil || c.Name != "Street food" || c.Parent == nil || c.Parent.ID != food.ID || c.Parent.Name != food.Name || c.Color != food.Color {
		t.Errorf("subcategory = %s, want a child of %s with its color %s", r.data, food.Name, food.Color)
	}

	// The next read sees both.
	var after categoryTreeAnswer
	r = e.ok(key, categoryTree, map[string]any{"id": food.ID}, &after)
	if r.calls == 0 {
		t.Error("the read after the writes was answered from what was read before them")
	}
	if after.Categories.TotalCount != familySize+2 || !slices.Contains(names(after.Categories.Nodes), "Pet care") || !slices.Contains(names(after.Categories.Nodes), "Street food") {
		t.Errorf("categories after the writes = %v (totalCount %d), want Pet care and Street food among %d", names(after.Categories.Nodes), after.Categories.TotalCount, familySize+2)
	}
	if got := names(after.Categories.Nodes); !slices.Equal(got, seedNames(e.upstream.Categories(key))) {
		t.Errorf("categories = %v, want the family in name order", got)
	}
	if s := after.Category; s.SubcategoriesCount != kids+1 || s.Subcategories == nil || !slices.Contains(names(s.Subcategories.Nodes), "Street food") || s.Subcategories.TotalCount != kids+1 {
		t.Errorf("Food & Drink after the write = %d subcategories %+v, want %d with Street food", s.SubcategoriesCount, s.Subcategories, kids+1)
	}

	// Within one batch: an earlier operation read the family, a later one
	// reads it after the write.
	res := postBatch(t, e, key, []batchOp{
		{Query: categoryTree, Variables: map[string]any{"id": food.ID}},
		{Query: createCategory, Variables: map[string]any{"in": map[string]any{"name": "Vet bills", "parentId": food.ID}}},
		{Query: categoryTree, Variables: map[string]any{"id": food.ID}},
	}, "")
	if calls := res.callsOf(); calls[1] != 1 || calls[2] == 0 {
		t.Errorf("calls of the batch's operations = %v, want the write 1 and the read after it at least 1", calls)
	}
	var batched categoryTreeAnswer
	if err := json.Unmarshal(res.answers[2].Data, &batched); err != nil || len(res.answers[2].Errors) > 0 {
		t.Fatalf("the batch's last answer: %v %v", err, res.answers[2].Errors)
	}
	if !slices.Contains(names(batched.Categories.Nodes), "Vet bills") || batched.Categories.TotalCount != familySize+3 ||
		batched.Category.SubcategoriesCount != kids+2 || !slices.Contains(names(batched.Category.Subcategories.Nodes), "Vet bills") {
		t.Errorf("the batch's read after the write = %s, want Vet bills in the list and under %s", res.answers[2].Data, food.Name)
	}

	// What the server refuses.
	for _, tc := range []struct {
		name  string
		in    map[string]any
		code  string
		field []string
		calls int
	}{
		{"name taken", map[string]any{"name": "Pet care"}, "TAKEN", []string{"input", "name"}, 1},
		{"a parent that is a subcategory", map[string]any{"name": "Third level", "parentId": sub.ID}, "INVALID", []string{"input", "parentId"}, 1},
		{"a parent of another family", map[string]any{"name": "Elsewhere", "parentId": e.upstream.Categories(restclienttest.OtherFamilyKey)[0].ID}, "INVALID", []string{"input", "parentId"}, 1},
		{"blank name", map[string]any{"name": " "}, "BLANK", []string{"input", "name"}, 0},
		{"parent id not a UUID", map[string]any{"name": "x", "parentId": "food"}, "INVALID_ID", []string{"input", "parentId"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out categoryPayload
			r := e.ok(key, createCategory, map[string]any{"in": tc.in}, &out)
			wantCalls(t, r, tc.calls)
			if out.CreateCategory == nil || out.CreateCategory.Category != nil {
				t.Fatalf("createCategory = %s, want no category", r.data)
			}
			wantOneUserError(t, out.CreateCategory.UserErrors, tc.code, tc.field...)
		})
	}
	// Sure joins the messages of all failed validations into one (", "):
	// each is its own user error, on its own field, with its own code.
	t.Run("taken name and invalid color", func(t *testing.T) {
		var out categoryPayload
		r := e.ok(key, createCategory, map[string]any{"in": map[string]any{"name": "Pet care", "color": "red"}}, &out)
		wantCalls(t, r, 1)
		want := []userError{
			{Field: []string{"input", "color"}, Message: "Color is invalid", Code: "INVALID"},
			{Field: []string{"input", "name"}, Message: "Name has already been taken", Code: "TAKEN"},
		}
		if out.CreateCategory == nil || !slices.EqualFunc(out.CreateCategory.UserErrors, want, func(a, b userError) bool {
			return slices.Equal(a.Field, b.Field) && a.Message == b.Message && a.Code == b.Code
		}) {
			t.Errorf("createCategory = %s, want the user errors %+v", r.data, want)
		}
	})
	t.Run("read-only key", func(t *testing.T) {
		r := e.do(restclienttest.ReadOnlyKey, createCategory, map[string]any{"in": map[string]any{"name": "Read only"}})
		wantCalls(t, r, 1)
		wantError(t, r, "FORBIDDEN")
		if _, made := e.upstream.CategoryByName(key, "Read only"); made {
			t.Error("the read-only key created a category")
		}
	})
	if got := len(e.upstream.Categories(key)); got != familySize+3 {
		t.Errorf("the family has %d categories, want %d", got, familySize+3)
	}
}

// A server older than v0.7.1 has no POST /categories (its router answers
// 404): createCategory is null with UNSUPPORTED_BY_UPSTREAM, for the one
// call that shows it, then for none, for every key of that server.
func TestCreateCategory_UnsupportedByALegacyServer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withUpstream(restclienttest.WithVersion(restclienttest.Legacy)))
	r := e.do(restclienttest.DemoKey, createCategory, map[string]any{"in": map[string]any{"name": "Pet care"}})
	wantCalls(t, r, 1)
	got := wantError(t, r, "UNSUPPORTED_BY_UPSTREAM")
	if string(r.data) != `{"createCategory":null}` || !containsAll(got.Message, "version", "category creation") {
		t.Errorf("data %s, error %q: want the field null and a message saying the server's version cannot create categories", r.data, got.Message)
	}
	for _, k := range []string{restclienttest.DemoKey, restclienttest.OtherFamilyKey, restclienttest.ReadOnlyKey} {
		r = e.do(k, createCategory, map[string]any{"in": map[string]any{"name": "Pet care"}})
		wantCalls(t, r, 0)
		wantError(t, r, "UNSUPPORTED_BY_UPSTREAM")
	}
	if _, made := e.upstream.CategoryByName(restclienttest.DemoKey, "Pet care"); made {
		t.Error("a category was created")
	}
}
