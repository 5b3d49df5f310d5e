package restclienttest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

func postCategory(t *testing.T, s *Server, key, body string) *httptest.ResponseRecorder {
	t.Helper()
	return serve(t, s, http.MethodPost, "/api/v1/categories", key, withBody("application/json", body))
}

func TestCreateCategory(t *testing.T) {
	s := newFixed()
	food := mustCategory(t, s, DemoKey, "Food & Drink")
	now := iso8601(fixedNow)

	t.Run("root with defaults", func(t *testing.T) {
		rec := postCategory(t, s, DemoKey, `{"category":{"name":"Pets"}}`)
		wantStatus(t, rec, http.StatusCreated)
		raw := rawObject(t, rec)
		if _, ok := raw["classification"]; ok {
			t.Errorf("body: got %s, want no classification Today", rec.Body)
		}
		got := decode[categoryJSON](t, rec)
		want := categoryJSON{ID: got.ID, Name: "Pets", Color: defaultCategoryColor, Icon: "shapes", CreatedAt: now, UpdatedAt: now}
		if got != want {
			t.Errorf("category: got %+v, want %+v", got, want)
		}
		if _, ok := castUUID(got.ID); !ok {
			t.Errorf("id: got %q, want a UUID", got.ID)
		}
		// It is stored: show, lookup, and the list in name order.
		if shown := decode[categoryJSON](t, get(t, s, "/api/v1/categories/"+got.ID, DemoKey)); shown != got {
			t.Errorf("show: got %+v, want %+v", shown, got)
		}
		if c := mustCategory(t, s, DemoKey, "Pets"); c.ID != got.ID || c.ParentID != "" {
			t.Errorf("CategoryByName: got %+v", c)
		}
		var names []string
		for _, c := range listCategories(t, s, DemoKey, "per_page=100").Categories {
			names = append(names, c.Name)
		}
		if len(names) != demoCategories+1 || !slices.IsSorted(names) || !slices.Contains(names, "Pets") {
			t.Errorf("list: got %d names %v, want %d sorted, with Pets", len(names), names, demoCategories+1)
		}
	})

	t.Run("subcategory takes its parent's color", func(t *testing.T) {
		rec := postCategory(t, s, DemoKey, `{"category":{"name":"Bakeries","color":"#123456","icon":"croissant","parent_id":"`+strings.ToUpper(food.ID)+`"}}`)
		got := decode[categoryJSON](t, rec)
		wantStatus(t, rec, http.StatusCreated)
		if got.Color != food.Color || got.Icon != "croissant" || got.Parent == nil || *got.Parent != (categoryRef{ID: food.ID, Name: food.Name}) {
			t.Errorf("category: got %+v, want %s's color, icon croissant, parent %s", got, food.Name, food.ID)
		}
		parent := decode[categoryJSON](t, get(t, s, "/api/v1/categories/"+food.ID, DemoKey))
		if parent.SubcategoriesCount != 4 {
			t.Errorf("parent's subcategories_count: got %d, want 4", parent.SubcategoriesCount)
		}
		under := listCategories(t, s, DemoKey, "parent_id="+food.ID)
		if under.Pagination.TotalCount != 4 {
			t.Errorf("parent_id list: got %d, want 4", under.Pagination.TotalCount)
		}
		// Internally it takes the parent's classification, which Legacy would show.
		if c := mustCategory(t, s, DemoKey, "Bakeries"); c.Classification != food.Classification {
			t.Errorf("classification: got %q, want %q", c.Classification, food.Classification)
		}
	})

	t.Run("root with color and icon", func(t *testing.T) {
		got := decode[categoryJSON](t, postCategory(t, s, DemoKey, `{"category":{"name":"Garden","color":"#a1B2c3","icon":"flower","parent_id":""}}`))
		if got.Color != "#a1B2c3" || got.Icon != "flower" || got.Parent != nil {
			t.Errorf("category: got %+v", got)
		}
	})

	t.Run("blank icon falls back", func(t *testing.T) {
		got := decode[categoryJSON](t, postCategory(t, s, DemoKey, `{"category":{"name":"Misc","icon":" "}}`))
		if got.Icon != "shapes" {
			t.Errorf("icon: got %q, want shapes", got.Icon)
		}
	})

	t.Run("form parameters", func(t *testing.T) {
		rec := serve(t, s, http.MethodPost, "/api/v1/categories", DemoKey,
			withBody("application/x-www-form-urlencoded", "category%5Bname%5D=From+a+form&category%5Bicon%5D=tag"))
		got := decode[categoryJSON](t, rec)
		if got.Name != "From a form" || got.Icon != "tag" {
			t.Errorf("category: got %+v", got)
		}
	})

	t.Run("ids are deterministic", func(t *testing.T) {
		a, b := newFixed(), newFixed()
		ida := decode[categoryJSON](t, postCategory(t, a, DemoKey, `{"category":{"name":"X"}}`)).ID
		idb := decode[categoryJSON](t, postCategory(t, b, DemoKey, `{"category":{"name":"X"}}`)).ID
		if ida != idb {
			t.Errorf("ids: got %s and %s, want the same", ida, idb)
		}
	})

	t.Run("other family does not see it", func(t *testing.T) {
		if _, ok := s.CategoryByName(OtherFamilyKey, "Pets"); ok {
			t.Error("other family: got Pets")
		}
		// Names are unique per family, not globally.
		wantStatus(t, postCategory(t, s, OtherFamilyKey, `{"category":{"name":"Pets"}}`), http.StatusCreated)
	})
}

func TestCreateCategoryRefused(t *testing.T) {
	const (
		missing   = `{"error":"bad_request","message":"Required parameters are missing or invalid"}`
		malformed = `{"status":400,"error":"Bad Request"}`
		crashed   = `{"status":500,"error":"Internal Server Error"}`
		scope     = `{"error":"insufficient_scope","message":"This action requires the 'read_write' scope"}`
	)
	unprocessable := func(msg string) string {
		return `{"error":"unprocessable_entity","message":"` + msg + `"}`
	}
	probe := newFixed()
	food := mustCategory(t, probe, DemoKey, "Food & Drink")
	coffee := mustCategory(t, probe, DemoKey, "Coffee Shops")
	otherRoot := mustCategory(t, probe, OtherFamilyKey, "Other Family Kids")

	tests := []struct {
		name        string
		key         string
		contentType string
		body        string
		wantStatus  int
		wantBody    string
	}{
		{"no body", DemoKey, "application/json", ``, http.StatusBadRequest, missing},
		{"no category", DemoKey, "application/json", `{"name":"Pets"}`, http.StatusBadRequest, missing},
		{"null category", DemoKey, "application/json", `{"category":null}`, http.StatusBadRequest, missing},
		{"empty category", DemoKey, "application/json", `{"category":{}}`, http.StatusBadRequest, missing},
		{"blank category", DemoKey, "application/json", `{"category":" "}`, http.StatusBadRequest, missing},
		{"JSON without Content-Type", DemoKey, "", `{"category":{"name":"Pets"}}`, http.StatusBadRequest, missing},
		{"malformed JSON", DemoKey, "application/json", `{"category":`, http.StatusBadRequest, malformed},
		{"scalar category", DemoKey, "application/json", `{"category":"Pets"}`, http.StatusInternalServerError, crashed},
		{"blank name", DemoKey, "application/json", `{"category":{"name":"  "}}`, http.StatusUnprocessableEntity, unprocessable("Name can't be blank")},
		{"no name", DemoKey, "application/json", `{"category":{"icon":"tag"}}`, http.StatusUnprocessableEntity, unprocessable("Name can't be blank")},
		{"object name", DemoKey, "application/json", `{"category":{"name":{"a":1}}}`, http.StatusUnprocessableEntity, unprocessable("Name can't be blank")},
		{"duplicate name", DemoKey, "application/json", `{"category":{"name":"Food & Drink"}}`, http.StatusUnprocessableEntity, unprocessable("Name has already been taken")},
		{"duplicate subcategory name", DemoKey, "application/json", `{"category":{"name":"Coffee Shops","parent_id":"` + food.ID + `"}}`, http.StatusUnprocessableEntity, unprocessable("Name has already been taken")},
		{"unknown parent", DemoKey, "application/json", `{"category":{"name":"Pets","parent_id":"` + seedID("nobody") + `"}}`, http.StatusUnprocessableEntity, unprocessable("Parent must be a category in your family")},
		{"non-UUID parent", DemoKey, "application/json", `{"category":{"name":"Pets","parent_id":"food"}}`, http.StatusUnprocessableEntity, unprocessable("Parent must be a category in your family")},
		{"other family's parent", DemoKey, "application/json", `{"category":{"name":"Pets","parent_id":"` + otherRoot.ID + `"}}`, http.StatusUnprocessableEntity, unprocessable("Parent must be a category in your family")},
		{"third level", DemoKey, "application/json", `{"category":{"name":"Espresso","parent_id":"` + coffee.ID + `"}}`, http.StatusUnprocessableEntity, unprocessable("Parent can't have more than 2 levels of subcategories")},
		{"invalid color", DemoKey, "application/json", `{"category":{"name":"Pets","color":"red"}}`, http.StatusUnprocessableEntity, unprocessable("Color is invalid")},
		{"blank color", DemoKey, "application/json", `{"category":{"name":"Pets","color":""}}`, http.StatusUnprocessableEntity, unprocessable("Color can't be blank, Color is invalid")},
		{"several errors", DemoKey, "application/json", `{"category":{"name":"","color":"#12345"}}`, http.StatusUnprocessableEntity, unprocessable("Name can't be blank, Color is invalid")},
		{"read-only key", ReadOnlyKey, "application/json", `{"category":{"name":"Pets"}}`, http.StatusForbidden, scope},
		// The scope is checked before the body is looked at.
		{"read-only key, no category", ReadOnlyKey, "application/json", `{}`, http.StatusForbidden, scope},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFixed()
			rec := serve(t, s, http.MethodPost, "/api/v1/categories", tt.key, withBody(tt.contentType, tt.body))
			wantJSON(t, rec, tt.wantStatus, tt.wantBody)
			if rec.Header().Get("X-RateLimit-Limit") == "" {
				t.Error("X-RateLimit-Limit: got none, want the rate-limit headers")
			}
			if got := len(s.Categories(DemoKey)); got != demoCategories {
				t.Errorf("categories: got %d, want %d (nothing created)", got, demoCategories)
			}
		})
	}
}

// Before v0.7.1 there is no such route: Rails' routing 404, without
// rate-limit headers, not counted, whatever the key.
func TestCreateCategoryLegacyIsRoutingError(t *testing.T) {
	for _, key := range []string{DemoKey, ReadOnlyKey, "not-a-key", ""} {
		t.Run("key "+key, func(t *testing.T) {
			s := newFixedAs(Legacy)
			s.SetRateLimit(DemoKey, 1)
			rec := postCategory(t, s, key, `{"category":{"name":"Pets"}}`)
			wantJSON(t, rec, http.StatusNotFound, routingError)
			wantNoRateHeaders(t, rec)
			if _, ok := s.CategoryByName(DemoKey, "Pets"); ok {
				t.Error("Pets: got it created")
			}
			if got := s.CallsFor(key); got != 1 {
				t.Errorf("CallsFor: got %d, want 1 (recorded)", got)
			}
			wantStatus(t, get(t, s, "/api/v1/categories", DemoKey), http.StatusOK) // the window is untouched
		})
	}
}
