package restclienttest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The demo family has 45 categories: 22 roots and 23 subcategories.
const (
	demoCategories = 45
	demoRootCount  = 22
)

func listCategories(t *testing.T, s *Server, key, query string) categoryList {
	t.Helper()
	return decode[categoryList](t, get(t, s, "/api/v1/categories?"+query, key))
}

func TestCategoriesPerPage(t *testing.T) {
	tests := []struct {
		perPage string
		want    int
	}{
		{"", 25},
		{"0", 25},
		{"101", 25},
		{"500", 25},
		{"junk", 25},
		{"-5", 25},
		{"1", 1},
		{"10", 10},
		{"100", 100},
		{"10abc", 10}, // String#to_i reads the leading digits
	}
	s := newFixed()
	for _, tt := range tests {
		t.Run("per_page="+tt.perPage, func(t *testing.T) {
			q := "per_page=" + url.QueryEscape(tt.perPage)
			if tt.perPage == "" {
				q = ""
			}
			got := listCategories(t, s, DemoKey, q)
			if got.Pagination.PerPage != tt.want {
				t.Errorf("per_page: got %d, want %d", got.Pagination.PerPage, tt.want)
			}
			if want := min(tt.want, demoCategories); len(got.Categories) != want {
				t.Errorf("categories: got %d, want %d", len(got.Categories), want)
			}
		})
	}
}

func TestCategoriesPage(t *testing.T) {
	s := newFixed()
	pages := map[int][]string{} // page -> ids, 10 a page: 5 pages
	for p := 1; p <= 5; p++ {
		for _, c := range listCategories(t, s, DemoKey, "per_page=10&page="+strconv.Itoa(p)).Categories {
			pages[p] = append(pages[p], c.ID)
		}
	}
	tests := []struct {
		page     string
		wantPage int
	}{
		{"", 1},
		{"0", 1},
		{"-3", 1},
		{"junk", 1},
		{"2", 2},
		{"2abc", 2},
		{"5", 5},
		// Overflow answers the LAST page, and says so.
		{"6", 5},
		{"9", 5},
		{"99999999999999999999999", 5},
	}
	for _, tt := range tests {
		t.Run("page="+tt.page, func(t *testing.T) {
			got := listCategories(t, s, DemoKey, "per_page=10&page="+url.QueryEscape(tt.page))
			want := pagination{Page: tt.wantPage, PerPage: 10, TotalCount: demoCategories, TotalPages: 5}
			if got.Pagination != want {
				t.Errorf("pagination: got %+v, want %+v", got.Pagination, want)
			}
			var ids []string
			for _, c := range got.Categories {
				ids = append(ids, c.ID)
			}
			if !slices.Equal(ids, pages[tt.wantPage]) {
				t.Errorf("items: got %v, want those of page %d %v", ids, tt.wantPage, pages[tt.wantPage])
			}
		})
	}
	if got := len(pages[5]); got != 5 {
		t.Errorf("last page: got %d items, want 5", got)
	}
}

func TestCategoriesEmptyResultHasOnePage(t *testing.T) {
	s := newFixed()
	rec := get(t, s, "/api/v1/categories?parent_id="+seedID("nobody")+"&page=3", DemoKey)
	got := decode[categoryList](t, rec)
	want := pagination{Page: 1, PerPage: 25, TotalCount: 0, TotalPages: 1}
	if got.Pagination != want {
		t.Errorf("pagination: got %+v, want %+v", got.Pagination, want)
	}
	if !strings.Contains(rec.Body.String(), `"categories":[]`) {
		t.Errorf("body: got %s, want an empty array, not null", rec.Body)
	}
}

// TestCategoriesFiltersLegacy: the filters as a server before v0.6.9 reads
// them, classification included.
func TestCategoriesFiltersLegacy(t *testing.T) {
	s := newFixedAs(Legacy)
	food := mustCategory(t, s, DemoKey, "Food & Drink")
	income := mustCategory(t, s, DemoKey, "Income")
	otherRoot := mustCategory(t, s, OtherFamilyKey, "Other Family Kids")
	noHyphens := "{" + strings.ToUpper(strings.ReplaceAll(food.ID, "-", "")) + "}"

	isRoot := func(c categoryJSON) bool { return c.Parent == nil }
	isIncome := func(c categoryJSON) bool { return c.Classification == "income" }
	isExpense := func(c categoryJSON) bool { return c.Classification == "expense" }
	underFood := func(c categoryJSON) bool { return c.Parent != nil && c.Parent.ID == food.ID }
	every := func(categoryJSON) bool { return true }

	tests := []struct {
		name  string
		query string
		want  int
		match func(categoryJSON) bool
	}{
		{"no filter", "", demoCategories, every},
		{"income", "classification=income", 4, isIncome},
		{"expense", "classification=expense", 41, isExpense},
		{"classification is case-sensitive", "classification=Income", 0, nil},
		{"junk classification matches nothing", "classification=junk", 0, nil},
		{"blank classification is no filter", "classification=%20%20", demoCategories, every},
		{"roots_only=true", "roots_only=true", demoRootCount, isRoot},
		{"roots_only=TRUE", "roots_only=TRUE", demoRootCount, isRoot},
		{"roots_only=1", "roots_only=1", demoRootCount, isRoot},
		{"roots_only=t", "roots_only=t", demoRootCount, isRoot},
		{"roots_only=On", "roots_only=On", demoRootCount, isRoot},
		{"roots_only=yes is false", "roots_only=yes", demoCategories, every},
		{"roots_only=false", "roots_only=false", demoCategories, every},
		{"roots_only=0", "roots_only=0", demoCategories, every},
		// The quirk: a parent_id that is not a UUID is cast to NULL and
		// selects the ROOT categories.
		{"non-UUID parent_id returns roots", "parent_id=food", demoRootCount, isRoot},
		{"numeric parent_id returns roots", "parent_id=42", demoRootCount, isRoot},
		{"truncated UUID returns roots", "parent_id=" + food.ID[:35], demoRootCount, isRoot},
		{"blank parent_id is no filter", "parent_id=", demoCategories, every},
		{"parent_id", "parent_id=" + food.ID, 3, underFood},
		{"uppercase parent_id", "parent_id=" + strings.ToUpper(food.ID), 3, underFood},
		{"braced parent_id without hyphens", "parent_id=" + url.QueryEscape(noHyphens), 3, underFood},
		{"unknown parent_id", "parent_id=" + seedID("nobody"), 0, nil},
		{"other family's parent_id", "parent_id=" + otherRoot.ID, 0, nil},
		{"roots_only and income", "roots_only=true&classification=income", 1, isIncome},
		{"parent_id and other classification", "parent_id=" + income.ID + "&classification=expense", 0, nil},
		{"roots_only and parent_id", "roots_only=1&parent_id=" + food.ID, 0, nil},
		{"last repeated value wins", "classification=junk&classification=income", 4, isIncome},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := listCategories(t, s, DemoKey, "per_page=100&"+tt.query)
			if got.Pagination.TotalCount != tt.want || len(got.Categories) != tt.want {
				t.Errorf("total_count: got %d (%d items), want %d", got.Pagination.TotalCount, len(got.Categories), tt.want)
			}
			for _, c := range got.Categories {
				if !tt.match(c) {
					t.Errorf("category %q should not match %q", c.Name, tt.query)
				}
			}
		})
	}
}

func TestCategoriesOrderedByName(t *testing.T) {
	s := newFixed()
	var names []string
	for p := 1; p <= 2; p++ {
		for _, c := range listCategories(t, s, DemoKey, "per_page=25&page="+strconv.Itoa(p)).Categories {
			names = append(names, c.Name)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("names: got %v, want them sorted", names)
	}
	var seeded []string
	for _, c := range s.Categories(DemoKey) {
		seeded = append(seeded, c.Name)
	}
	if !slices.Equal(names, seeded) {
		t.Errorf("Categories(): got %v, want the list endpoint's order %v", seeded, names)
	}
}

func TestCategoryShow(t *testing.T) {
	iso := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)
	s := newFixed()
	food := mustCategory(t, s, DemoKey, "Food & Drink")
	coffee := mustCategory(t, s, DemoKey, "Coffee Shops")

	t.Run("subcategory", func(t *testing.T) {
		got := decode[categoryJSON](t, get(t, s, "/api/v1/categories/"+coffee.ID, DemoKey))
		want := categoryJSON{
			ID: coffee.ID, Name: "Coffee Shops", // no classification Today
			Color: "#f97316", // inherited from Food & Drink
			Icon:  "coffee", Parent: &categoryRef{ID: food.ID, Name: "Food & Drink"},
			SubcategoriesCount: 0, CreatedAt: "2025-12-18T09:34:00Z", UpdatedAt: "2025-12-18T09:34:00Z",
		}
		if got.Parent == nil || *got.Parent != *want.Parent {
			t.Errorf("parent: got %+v, want %+v", got.Parent, want.Parent)
		}
		got.Parent, want.Parent = nil, nil
		if got != want {
			t.Errorf("category: got %+v, want %+v", got, want)
		}
	})
	t.Run("root", func(t *testing.T) {
		rec := get(t, s, "/api/v1/categories/"+food.ID, DemoKey)
		got := decode[categoryJSON](t, rec)
		if got.SubcategoriesCount != 3 {
			t.Errorf("subcategories_count: got %d, want 3", got.SubcategoriesCount)
		}
		if !strings.Contains(rec.Body.String(), `"parent":null`) {
			t.Errorf("body: got %s, want \"parent\":null", rec.Body)
		}
		// Rails and encoding/json both escape & in JSON strings.
		if !strings.Contains(rec.Body.String(), `"name":"Food \u0026 Drink"`) {
			t.Errorf("body: got %s, want the name with & escaped", rec.Body)
		}
		if !iso.MatchString(got.CreatedAt) || !iso.MatchString(got.UpdatedAt) {
			t.Errorf("timestamps: got %q/%q, want ISO 8601 seconds UTC", got.CreatedAt, got.UpdatedAt)
		}
	})
	t.Run("uppercase id", func(t *testing.T) {
		got := decode[categoryJSON](t, get(t, s, "/api/v1/categories/"+strings.ToUpper(food.ID), DemoKey))
		if got.ID != food.ID {
			t.Errorf("id: got %q, want %q", got.ID, food.ID)
		}
	})

	notFound := []struct{ name, id string }{
		{"unknown", seedID("nothing")},
		{"other family's", mustCategory(t, s, OtherFamilyKey, "Other Family Rent").ID},
		{"not a UUID", "food-and-drink"},
		{"number", "123"},
	}
	for _, tt := range notFound {
		t.Run(tt.name, func(t *testing.T) {
			wantJSON(t, get(t, s, "/api/v1/categories/"+tt.id, DemoKey), http.StatusNotFound,
				`{"error":"not_found","message":"Category not found"}`)
		})
	}
}

// TestCategoriesFiltersToday: from v0.6.9 classification is gone (the filter
// is ignored) and roots_only is Rails' boolean cast.
func TestCategoriesFiltersToday(t *testing.T) {
	s := newFixed()
	food := mustCategory(t, s, DemoKey, "Food & Drink")
	isRoot := func(c categoryJSON) bool { return c.Parent == nil }
	underFood := func(c categoryJSON) bool { return c.Parent != nil && c.Parent.ID == food.ID }
	every := func(categoryJSON) bool { return true }

	tests := []struct {
		name  string
		query string
		want  int
		match func(categoryJSON) bool
	}{
		{"no filter", "", demoCategories, every},
		{"classification=income is ignored", "classification=income", demoCategories, every},
		{"classification=expense is ignored", "classification=expense", demoCategories, every},
		{"junk classification is ignored", "classification=junk", demoCategories, every},
		{"classification does not narrow roots_only", "roots_only=true&classification=income", demoRootCount, isRoot},
		{"classification does not narrow parent_id", "parent_id=" + food.ID + "&classification=income", 3, underFood},
		// Rails' boolean cast: blank and seven strings are false, the rest true.
		{"roots_only=true", "roots_only=true", demoRootCount, isRoot},
		{"roots_only=1", "roots_only=1", demoRootCount, isRoot},
		{"roots_only=yes", "roots_only=yes", demoRootCount, isRoot},
		{"roots_only=no", "roots_only=no", demoRootCount, isRoot},
		{"roots_only=False", "roots_only=False", demoRootCount, isRoot},
		{"roots_only=Off", "roots_only=Off", demoRootCount, isRoot},
		{"roots_only=2", "roots_only=2", demoRootCount, isRoot},
		{"roots_only=false", "roots_only=false", demoCategories, every},
		{"roots_only=FALSE", "roots_only=FALSE", demoCategories, every},
		{"roots_only=0", "roots_only=0", demoCategories, every},
		{"roots_only=f", "roots_only=f", demoCategories, every},
		{"roots_only=F", "roots_only=F", demoCategories, every},
		{"roots_only=off", "roots_only=off", demoCategories, every},
		{"roots_only=OFF", "roots_only=OFF", demoCategories, every},
		{"roots_only blank", "roots_only=", demoCategories, every},
		{"roots_only spaces", "roots_only=%20%20", demoCategories, every},
		{"non-UUID parent_id returns roots", "parent_id=food", demoRootCount, isRoot},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := listCategories(t, s, DemoKey, "per_page=100&"+tt.query)
			if got.Pagination.TotalCount != tt.want || len(got.Categories) != tt.want {
				t.Errorf("total_count: got %d (%d items), want %d", got.Pagination.TotalCount, len(got.Categories), tt.want)
			}
			for _, c := range got.Categories {
				if !tt.match(c) {
					t.Errorf("category %q should not match %q", c.Name, tt.query)
				}
			}
		})
	}
}

// TestCategoryClassificationKey: Today's Category has no classification key
// at all (list and show); Legacy's has it.
func TestCategoryClassificationKey(t *testing.T) {
	for _, v := range versions {
		t.Run(v.String(), func(t *testing.T) {
			s := newFixedAs(v)
			income := mustCategory(t, s, DemoKey, "Salary")
			list := decode[struct {
				Categories []map[string]json.RawMessage `json:"categories"`
			}](t, get(t, s, "/api/v1/categories?per_page=100", DemoKey))
			show := rawObject(t, get(t, s, "/api/v1/categories/"+income.ID, DemoKey))

			_, inShow := show["classification"]
			if inShow != (v == Legacy) {
				t.Errorf("show: classification present %v, want %v", inShow, v == Legacy)
			}
			if v == Legacy && string(show["classification"]) != `"income"` {
				t.Errorf("show: classification got %s, want \"income\"", show["classification"])
			}
			for _, c := range list.Categories {
				if _, ok := c["classification"]; ok != (v == Legacy) {
					t.Fatalf("list: classification present %v, want %v", ok, v == Legacy)
				}
			}
			wantKeys := []string{"id", "name", "color", "icon", "parent", "subcategories_count", "created_at", "updated_at"}
			if v == Legacy {
				wantKeys = append(wantKeys, "classification")
			}
			if len(show) != len(wantKeys) {
				t.Errorf("show: got %d keys, want %v", len(show), wantKeys)
			}
			for _, k := range wantKeys {
				if _, ok := show[k]; !ok {
					t.Errorf("show: got no %q", k)
				}
			}
		})
	}
}
